"""Round robin: equal counts, balanced seats, varied opponents, determinism."""

from __future__ import annotations

from collections import Counter
from math import ceil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.format_strategies import entries
from tournaments.formats import (
    FixtureError,
    matches_per_bot,
    pair_counts,
    round_robin,
    seat_counts,
)

FAST = settings(max_examples=20, deadline=None)
rounds = st.integers(min_value=1, max_value=3)
seeds = st.integers(min_value=0, max_value=2**63)


@FAST
@given(entries(), rounds, seeds)
def test_every_bot_plays_the_same_number_of_matches(drawn, rounds, seed) -> None:
    bots, k = drawn
    fixtures = round_robin(bots, k, rounds, seed)
    played = Counter(bot for fixture in fixtures for bot in fixture.seats)
    assert set(played) == set(bots)
    assert set(played.values()) == {matches_per_bot(len(bots), k, rounds)}
    assert all(len(set(f.seats)) == k for f in fixtures)


@FAST
@given(entries(), rounds, seeds)
def test_each_bot_seat_counts_differ_by_at_most_one(drawn, rounds, seed) -> None:
    bots, k = drawn
    for counts in seat_counts(round_robin(bots, k, rounds, seed)).values():
        per_seat = [counts[seat] for seat in range(k)]
        assert max(per_seat) - min(per_seat) <= 1


@FAST
@given(entries(), rounds, seeds)
def test_no_bot_plays_twice_in_a_round_and_rounds_are_full_but_the_last(
    drawn, rounds, seed
) -> None:
    bots, k = drawn
    fixtures = round_robin(bots, k, rounds, seed)
    by_round: dict[int, list[int]] = {}
    for fixture in fixtures:
        by_round.setdefault(fixture.round, []).extend(fixture.seats)
    last = max(by_round)
    for number, seated in by_round.items():
        assert len(seated) == len(set(seated))
        if number != last:
            assert len(seated) == len(bots) // k * k


@FAST
@given(entries(), rounds, seeds)
def test_no_pair_meets_more_than_three_times_beyond_an_even_spread(drawn, rounds, seed) -> None:
    bots, k = drawn
    fixtures = round_robin(bots, k, rounds, seed)
    per_bot = matches_per_bot(len(bots), k, rounds)
    even_spread = ceil(per_bot * (k - 1) / (len(bots) - 1))
    assert max(pair_counts(f.seats for f in fixtures).values()) <= even_spread + 3


def test_when_the_table_divides_the_bots_every_pair_meets_once_at_most_in_one_round() -> None:
    fixtures = round_robin(list(range(12)), 4, 1, seed=3)
    assert len(fixtures) == 3
    assert max(pair_counts(f.seats for f in fixtures).values()) == 1


def test_matches_are_rounded_up_so_counts_can_be_equal() -> None:
    assert matches_per_bot(12, 4, 2) == 2
    assert matches_per_bot(10, 3, 1) == 3
    assert matches_per_bot(10, 4, 3) == 4
    assert len(round_robin(list(range(10)), 3, 1, seed=1)) == 10


@FAST
@given(entries(max_bots=20), rounds, seeds)
def test_the_same_seed_gives_the_same_schedule(drawn, rounds, seed) -> None:
    bots, k = drawn
    assert round_robin(bots, k, rounds, seed) == round_robin(bots, k, rounds, seed)


def test_fixture_seeds_are_distinct_and_depend_on_the_tournament_seed() -> None:
    first = round_robin(list(range(9)), 3, 2, seed=1)
    second = round_robin(list(range(9)), 3, 2, seed=2)
    assert len({f.seed for f in first}) == len(first)
    assert {f.seed for f in first}.isdisjoint({f.seed for f in second})


@pytest.mark.parametrize(
    ("bots", "table_size", "rounds", "words"),
    [
        (list(range(3)), 4, 1, "need at least 4 bots"),
        (list(range(9)), 2, 1, "table_size must be 3..8"),
        (list(range(9)), 9, 1, "table_size must be 3..8"),
        ([1, 2, 2, 3], 3, 1, "repeated: [2]"),
        (list(range(9)), 3, 0, "rounds must be at least 1"),
    ],
)
def test_bad_arguments_are_refused_with_a_clear_value_error(
    bots, table_size, rounds, words
) -> None:
    with pytest.raises(FixtureError, match=words.replace("[", r"\[").replace("]", r"\]")):
        round_robin(bots, table_size, rounds, seed=0)
    assert issubclass(FixtureError, ValueError)
