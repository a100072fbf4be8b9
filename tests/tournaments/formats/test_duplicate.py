"""Duplicate: groups are exactly the rotations of one deal seed; deal-by-deal comparison."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.format_strategies import entries
from tournaments.formats import (
    DuplicateResult,
    duplicate,
    duplicate_differences,
    matches_per_bot,
    rotations,
    seat_counts,
)

FAST = settings(max_examples=15, deadline=None)
rounds = st.integers(min_value=1, max_value=2)
seeds = st.integers(min_value=0, max_value=2**63)


def groups_of(fixtures):
    groups = defaultdict(list)
    for fixture in fixtures:
        groups[fixture.duplicate_group].append(fixture)
    return groups


@FAST
@given(entries(), rounds, seeds)
def test_each_group_holds_exactly_the_rotations_of_one_seed(drawn, rounds, seed) -> None:
    bots, k = drawn
    for group in groups_of(duplicate(bots, k, rounds, seed)).values():
        assert len(group) == k
        assert len({f.seed for f in group}) == 1
        assert len({f.round for f in group}) == 1
        assert {f.seats for f in group} == set(rotations(group[0].seats))
        for seat in range(k):
            assert len({f.seats[seat] for f in group}) == k


@FAST
@given(entries(), rounds, seeds)
def test_every_bot_plays_the_same_number_of_matches_in_every_seat_equally(
    drawn, rounds, seed
) -> None:
    bots, k = drawn
    fixtures = duplicate(bots, k, rounds, seed)
    played = Counter(bot for fixture in fixtures for bot in fixture.seats)
    assert set(played.values()) == {k * matches_per_bot(len(bots), k, rounds)}
    for counts in seat_counts(fixtures).values():
        assert len({counts[seat] for seat in range(k)}) == 1


@FAST
@given(entries(max_bots=20), rounds, seeds)
def test_groups_have_distinct_seeds_and_the_schedule_is_deterministic(drawn, rounds, seed) -> None:
    bots, k = drawn
    fixtures = duplicate(bots, k, rounds, seed)
    assert fixtures == duplicate(bots, k, rounds, seed)
    seeds_by_group = {f.duplicate_group: f.seed for f in fixtures}
    assert len(set(seeds_by_group.values())) == len(seeds_by_group)
    assert len({(f.round, f.table) for f in fixtures}) == len(fixtures)


def test_a_bot_that_plays_the_cards_better_gains_what_the_others_lose() -> None:
    # Seat 0's cards are worth 10 a deal to anyone, except to bot 1 who makes 13 of them.
    results = []
    for seats in rotations((1, 2, 3)):
        scores = [
            [13 if bot == 1 and seat == 0 else (10 if seat == 0 else 0)]
            for seat, bot in enumerate(seats)
        ]
        results.append(DuplicateResult("0.0", seats, scores))
    differences = duplicate_differences(results)
    assert differences == pytest.approx({1: 2.0, 2: -1.0, 3: -1.0})
    assert sum(differences.values()) == pytest.approx(0.0)


def test_lucky_cards_cancel_out_when_every_bot_plays_the_same() -> None:
    results = [
        DuplicateResult("g", seats, [[50, 0], [0, 5], [10, 10]]) for seats in rotations((7, 8, 9))
    ]
    assert duplicate_differences(results) == {7: 0.0, 8: 0.0, 9: 0.0}


def test_deals_are_compared_only_with_the_rotations_that_played_them() -> None:
    results = [
        DuplicateResult("g", (1, 2, 3), [[10, 20], [0], [0]]),
        DuplicateResult("g", (3, 1, 2), [[14], [0], [0]]),
    ]
    # Deal 0 at seat 0: 10 vs 14; deal 1 at seat 0 was played once, so it counts zero.
    assert duplicate_differences(results) == pytest.approx({1: -2.0, 2: 0.0, 3: 2.0})
