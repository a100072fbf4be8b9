"""Tests of the schema migrations, each applied to rows as the migration before left them."""
