"""Schedules pinned (same entries and seed, same fixtures) and counted without being made.

The digests were computed with the grouping that tried every pair of bots each pass; the
faster grouping (tournaments/formats/round_robin.py) must make exactly the same swaps.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.format_strategies import entries
from tournaments import formats
from tournaments.formats import Fixture

PINNED = [
    ("round_robin", 12, 4, 5, 1, 15, "105ef6bfb55b3a3e"),
    ("round_robin", 13, 3, 7, 2, 39, "8e1a6a7d0887eb5d"),
    ("round_robin", 40, 4, 40, 3, 400, "8e22158b452adb06"),
    ("round_robin", 25, 6, 30, 4, 125, "21a86d0c06be2f68"),
    ("round_robin", 61, 7, 15, 5, 183, "f8acdc3f9ddaa781"),
    ("round_robin", 100, 4, 50, 6, 1250, "e5a22d13ac36f59f"),
    ("round_robin", 37, 5, 60, 7, 444, "afca60fe3cd2abb1"),
    ("round_robin", 9, 3, 100, 8, 300, "456f4ee0a3d01905"),
    ("round_robin", 600, 4, 3, 12, 450, "c5f68a97d1b7098e"),
    ("round_robin", 150, 3, 30, 13, 1500, "91761629553bbedf"),
    ("duplicate", 20, 4, 10, 9, 200, "933dce889a1b78d8"),
    ("duplicate", 33, 3, 12, 10, 396, "5a8a5c088b59e852"),
    ("duplicate", 50, 5, 20, 11, 1000, "9cdfe8123062cf94"),
]


def digest(fixtures: list[Fixture]) -> str:
    rows = [[f.round, f.table, list(f.seats), f.seed, f.duplicate_group] for f in fixtures]
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


@pytest.mark.parametrize(("fmt", "bots", "table", "rounds", "seed", "count", "pinned"), PINNED)
def test_schedules_are_the_ones_pinned(fmt, bots, table, rounds, seed, count, pinned) -> None:
    fixtures = getattr(formats, fmt)([1000 + 7 * i for i in range(bots)], table, rounds, seed)
    assert len(fixtures) == count
    assert digest(fixtures) == pinned


@settings(max_examples=30, deadline=None)
@given(entries(max_bots=30), st.integers(min_value=1, max_value=4), st.integers(0, 2**63))
def test_counts_match_the_schedules_without_making_them(drawn, rounds, seed) -> None:
    bots, k = drawn
    assert formats.round_robin_count(len(bots), k, rounds) == len(
        formats.round_robin(bots, k, rounds, seed)
    )
    assert formats.duplicate_count(len(bots), k, rounds) == len(
        formats.duplicate(bots, k, rounds, seed)
    )
    first = formats.swiss_round([(b, 0.0) for b in bots], k, 0, seed, set())
    assert formats.swiss_count(len(bots), k, rounds) == rounds * len(first)
