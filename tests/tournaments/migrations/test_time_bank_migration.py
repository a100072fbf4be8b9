"""The migration to time banks: matches and tournaments made before play on without a bank,
ladders take the default bank for their next tables."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from arena.timebank import DEFAULT_TIME_BANK_MS
from tests.support.migrating import historical, migrate, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("tournaments", "0025_rank_intervals")
AFTER = ("tournaments", "0026_time_bank")


def test_what_existed_keeps_no_bank_but_a_ladder_takes_the_default(presets) -> None:
    migrate(BEFORE)
    try:
        organiser = User.objects.create_user(username="organiser")
        variant_id = historical(BEFORE, "Variant").objects.get(name="oh-hell").pk
        historical(BEFORE, "Tournament").objects.create(
            name="old cup", organiser_id=organiser.pk, variant_id=variant_id, format="swiss"
        )
        historical(BEFORE, "Match").objects.create(variant_id=variant_id)
        historical(BEFORE, "Ladder").objects.get_or_create(variant_id=variant_id)
        migrate(AFTER)
        banks = {
            model: set(historical(AFTER, model).objects.values_list("time_bank_ms", flat=True))
            for model in ("Tournament", "Match", "Ladder")
        }
        assert banks == {"Tournament": {0}, "Match": {0}, "Ladder": {DEFAULT_TIME_BANK_MS}}
        made_now = historical(AFTER, "Tournament").objects.create(
            name="new cup", organiser_id=organiser.pk, variant_id=variant_id, format="swiss"
        )
        assert made_now.time_bank_ms == DEFAULT_TIME_BANK_MS
    finally:
        migrate_to_latest()
