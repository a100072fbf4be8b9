"""Helpers for the migration tests: move the test database between migrations, read rows with
the models as they were at one of them."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Model


def migrate(target: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([target])


def migrate_to_latest() -> None:
    """Apply every migration again, later ones included, for the tests that follow."""
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def historical(target: tuple[str, str], model: str) -> type[Model]:
    """The model as it is at ``target``: the current one may reach columns and tables that
    later migrations make."""
    state = MigrationExecutor(connection).loader.project_state([target])
    return state.apps.get_model("tournaments", model)
