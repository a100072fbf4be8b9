"""Helpers for the migration tests: move the test database between migrations, read rows with
the models as they were at one of them."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(target: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([target])


def migrate_to_latest() -> None:
    """Apply every migration again, later ones included, for the tests that follow."""
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def historical(target: tuple[str, str], model: str) -> Any:
    """The model as it is at ``target``: the current one may reach columns and tables that
    later migrations make."""
    # Any: the class is built at run time from the migration state, so neither its fields nor
    # its manager (``objects``) are known to the type checker.
    state = MigrationExecutor(connection).loader.project_state([target])
    return state.apps.get_model("tournaments", model)
