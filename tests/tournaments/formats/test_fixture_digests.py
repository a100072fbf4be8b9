"""Schedules pinned (same entries and seed, same fixtures) and counted without being made.

The digests were computed with the grouping that tried every pair of bots each pass; the
faster grouping (tournaments/formats/round_robin.py) must make exactly the same swaps. The round
robin's were pinned again when its seats came to be drawn from a stream of their own, a stretch
of rounds at a time, so a schedule is handed out as it is made: its tables stayed the same
(``test_streaming_kept_every_table_and_each_bots_seats_balanced``).
"""

from __future__ import annotations

import hashlib
import importlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.format_strategies import entries
from tournaments import formats
from tournaments.formats import Fixture

PINNED = [
    ("round_robin", 12, 4, 5, 1, 15, "d6298e6c8e8f9d1c"),
    ("round_robin", 13, 3, 7, 2, 39, "55d477f6d6e328a8"),
    ("round_robin", 40, 4, 40, 3, 400, "5e58b228da2ecb31"),
    ("round_robin", 25, 6, 30, 4, 125, "8d384120bfb5d403"),
    ("round_robin", 61, 7, 15, 5, 183, "ad573aa7b730c125"),
    ("round_robin", 100, 4, 50, 6, 1250, "12569913db51b105"),
    ("round_robin", 37, 5, 60, 7, 444, "ecc7dfcd78a3558c"),
    ("round_robin", 9, 3, 100, 8, 300, "b0193f511d6433b4"),
    ("round_robin", 600, 4, 3, 12, 450, "4255280fd87f6499"),
    ("round_robin", 150, 3, 30, 13, 1500, "b6285f7501b45b8f"),
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


# The tables (who sits together, in which round) of the round robins above, as they were before
# the seats were coloured a stretch at a time: sorted seats of every fixture, in order.
TABLES_PINNED = [
    (12, 4, 5, 1, "f423111136d8c2a7"),
    (13, 3, 7, 2, "750236df8e676c13"),
    (40, 4, 40, 3, "74a34a5dd350e704"),
    (61, 7, 15, 5, "ccc6d901c49987b0"),
    (150, 3, 30, 13, "949df59c90872b2b"),
]


@pytest.mark.parametrize(("bots", "table", "rounds", "seed", "pinned"), TABLES_PINNED)
def test_streaming_kept_every_table_and_each_bots_seats_balanced(
    bots, table, rounds, seed, pinned
) -> None:
    fixtures = formats.round_robin([1000 + 7 * i for i in range(bots)], table, rounds, seed)
    rows = [[f.round, f.table, sorted(f.seats)] for f in fixtures]
    assert hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16] == pinned
    for counts in formats.seat_counts(fixtures).values():
        assert max(counts.values()) - min(counts.get(s, 0) for s in range(table)) <= 1


def test_the_stream_hands_out_the_first_rounds_before_the_last_are_grouped(monkeypatch) -> None:
    # The package's round_robin is the function; the module is reached by its full name.
    module = importlib.import_module("tournaments.formats.round_robin")
    grouped: list[int] = []
    real = module._best_grouping

    def counting(*args, **kwargs):
        grouped.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "_best_grouping", counting)
    stream = formats.round_robin_stream(list(range(200)), 4, 1000, 5)
    first = [next(stream) for _ in range(200)]  # four rounds of 50 tables
    assert [f.round for f in first] == [r for r in range(4) for _ in range(50)]
    assert len(grouped) == 4  # only the first four of 1,000 rounds were grouped
