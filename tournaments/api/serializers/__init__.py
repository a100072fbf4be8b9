"""Input validation and output shapes, a module per resource; no business rules here."""
