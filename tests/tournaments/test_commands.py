"""Management commands that ./run calls: what they say on a fresh and on a seeded database."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from engine import PRESETS
from tournaments.models import Variant

pytestmark = pytest.mark.django_db


def seed() -> str:
    out = StringIO()
    call_command("seed_presets", stdout=out)
    return out.getvalue().splitlines()[0]


def test_seed_presets_says_all_are_stored_rather_than_zero_new() -> None:
    # The migration stores the presets, so a fresh database already has all of them.
    assert seed() == f"Preset variants: all {len(PRESETS)} stored already."
    Variant.objects.filter(name="oh-hell").delete()
    assert seed() == f"Preset variants: 1 added, all {len(PRESETS)} stored."
    assert Variant.objects.filter(is_preset=True).count() == len(PRESETS)
