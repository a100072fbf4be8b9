"""Fixture generation for every tournament format, as pure functions of bot ids and a seed.

No Django here: services turn these values into rows. Every format draws its randomness from
the tournament seed alone, so the same entries and seed always give the same fixtures.
"""

from tournaments.formats.common import (
    MAX_TABLE,
    MIN_TABLE,
    Fixture,
    FixtureError,
    fixture_seed,
    pair_counts,
    seat_counts,
)
from tournaments.formats.duplicate import (
    DuplicateResult,
    duplicate,
    duplicate_count,
    duplicate_differences,
    rotations,
)
from tournaments.formats.round_robin import (
    matches_per_bot,
    round_robin,
    round_robin_count,
    round_robin_stream,
)
from tournaments.formats.swiss import (
    repeated_tables,
    swiss_count,
    swiss_round,
    swiss_table_sizes,
)

__all__ = [
    "MAX_TABLE",
    "MIN_TABLE",
    "DuplicateResult",
    "Fixture",
    "FixtureError",
    "duplicate",
    "duplicate_count",
    "duplicate_differences",
    "fixture_seed",
    "matches_per_bot",
    "pair_counts",
    "repeated_tables",
    "rotations",
    "round_robin",
    "round_robin_count",
    "round_robin_stream",
    "seat_counts",
    "swiss_count",
    "swiss_round",
    "swiss_table_sizes",
]
