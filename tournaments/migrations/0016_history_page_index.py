"""Index a bot's rating history so that a page of it is an index-only scan.

The index covers every column a page shows, so a bot's rows, which the table keeps in the
order they were rated (about one table page per row), are read from a few index pages. On
PostgreSQL it is built, and the index it replaces dropped, concurrently: rating writes and
reads go on meanwhile (hence not in a transaction). Should a concurrent build fail,
PostgreSQL keeps an invalid index: drop it and migrate again.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.operations.base import Operation
from django.db.migrations.state import ProjectState


class WithoutBlocking(Operation):
    """The concurrent operation on PostgreSQL; elsewhere (SQLite, for development) ``plain``."""

    plain: type[Operation]

    def database_forwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)
        else:
            self.plain.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
        else:
            self.plain.database_backwards(self, app_label, schema_editor, from_state, to_state)


class AddIndexWithoutBlocking(WithoutBlocking, AddIndexConcurrently):
    plain = migrations.AddIndex


class RemoveIndexWithoutBlocking(WithoutBlocking, RemoveIndexConcurrently):
    plain = migrations.RemoveIndex


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("tournaments", "0015_tournament_starting"),
    ]

    operations = [
        AddIndexWithoutBlocking(
            model_name="ratinghistory",
            index=models.Index(
                fields=["bot", "variant", "sequence"],
                include=(
                    "id",
                    "match",
                    "version",
                    "at",
                    "mu_before",
                    "sigma_before",
                    "mu_after",
                    "sigma_after",
                ),
                name="history_bot_page_idx",
            ),
        ),
        RemoveIndexWithoutBlocking(
            model_name="ratinghistory",
            name="history_bot_variant_seq_idx",
        ),
    ]
