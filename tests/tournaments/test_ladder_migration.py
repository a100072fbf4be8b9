"""The migration to independent ladder deals turns duplicate off on every existing ladder."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tournaments.models import Ladder, Variant

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("tournaments", "0016_history_page_index")
AFTER = ("tournaments", "0017_ladder_independent_deals")


def migrate(target: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([target])


def migrate_to_latest() -> None:
    """Apply every migration again, later ones included, for the tests that follow."""
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_existing_ladders_stop_replaying_deals(presets):
    migrate(BEFORE)
    try:
        old_ladder = (
            MigrationExecutor(connection)
            .loader.project_state([BEFORE])
            .apps.get_model("tournaments", "Ladder")
        )
        Ladder.objects.all().delete()
        for name in ("oh-hell", "blackout"):
            old_ladder.objects.create(variant_id=Variant.objects.get(name=name).pk)
        assert set(Ladder.objects.values_list("duplicate", flat=True)) == {True}  # the old default
        migrate(AFTER)
        assert Ladder.objects.count() == 2
        assert set(Ladder.objects.values_list("duplicate", flat=True)) == {False}
    finally:
        migrate_to_latest()
