"""The migration to independent ladder deals turns duplicate off on every existing ladder."""

from __future__ import annotations

import pytest

from tests.support.migrating import historical, migrate, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("tournaments", "0016_history_page_index")
AFTER = ("tournaments", "0017_ladder_independent_deals")


def test_existing_ladders_stop_replaying_deals(presets) -> None:
    migrate(BEFORE)
    try:
        old_ladder = historical(BEFORE, "Ladder")
        old_variant = historical(BEFORE, "Variant")
        old_ladder.objects.all().delete()
        for name in ("oh-hell", "blackout"):
            old_ladder.objects.create(variant_id=old_variant.objects.get(name=name).pk)
        # the old default
        assert set(old_ladder.objects.values_list("duplicate", flat=True)) == {True}
        migrate(AFTER)
        new_ladder = historical(AFTER, "Ladder")
        assert new_ladder.objects.count() == 2
        assert set(new_ladder.objects.values_list("duplicate", flat=True)) == {False}
    finally:
        migrate_to_latest()
