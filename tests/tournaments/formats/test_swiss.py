"""Swiss rounds: close standings at each table, no repeated table when avoidable, byes."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.format_strategies import entries
from tournaments.formats import (
    Fixture,
    FixtureError,
    repeated_tables,
    seat_counts,
    swiss_round,
    swiss_table_sizes,
)

FAST = settings(max_examples=30, deadline=None)
seeds = st.integers(min_value=0, max_value=2**63)


def play_rounds(
    bots: list[int], k: int, count: int, seed: int, with_seats: bool = False
) -> list[list[Fixture]]:
    """Play `count` Swiss rounds with random results; return every round's fixtures."""
    rng = random.Random(seed)
    points = dict.fromkeys(bots, 0)
    history: set[frozenset[int]] = set()
    byes: set[int] = set()
    played: list[list[Fixture]] = []
    for number in range(count):
        seat_history: dict[int, list[int]] | None = None
        if with_seats:
            counts = seat_counts(f for fixtures in played for f in fixtures)
            seat_history = {bot: [c[s] for s in range(k)] for bot, c in counts.items()}
        fixtures = swiss_round(
            list(points.items()),
            k,
            number,
            seed,
            history,
            had_bye=byes,
            seat_history=seat_history,
        )
        seated = {bot for f in fixtures for bot in f.seats}
        byes |= set(bots) - seated
        played.append(fixtures)
        for fixture in fixtures:
            history.add(frozenset(fixture.seats))
            for bot in fixture.seats:
                points[bot] += rng.randint(0, 30)
    return played


@FAST
@given(st.integers(3, 40), st.integers(3, 8))
def test_table_sizes_stay_between_three_and_the_table_size_with_few_byes(bots, k) -> None:
    sizes = swiss_table_sizes(bots, k)
    assert all(3 <= size <= k for size in sizes)
    assert max(sizes) - min(sizes) <= 1
    assert bots - sum(sizes) < k
    if bots >= 3 * -(-bots // k):
        assert sum(sizes) == bots


@FAST
@given(entries(), seeds)
def test_every_seated_bot_plays_once_and_byes_are_the_bottom_of_the_standings(drawn, seed) -> None:
    bots, k = drawn
    standings = [(bot, float(i)) for i, bot in enumerate(bots)]
    fixtures = swiss_round(standings, k, 0, seed, set())
    seated = [bot for f in fixtures for bot in f.seats]
    assert len(seated) == len(set(seated)) == sum(swiss_table_sizes(len(bots), k))
    byes = set(bots) - set(seated)
    assert byes == set(bots[: len(byes)])


@FAST
@given(entries(), seeds)
def test_tables_are_cut_from_consecutive_standings_when_nothing_repeats(drawn, seed) -> None:
    bots, k = drawn
    standings = [(bot, float(-i)) for i, bot in enumerate(bots)]
    fixtures = swiss_round(standings, k, 0, seed, set())
    start = 0
    for fixture in fixtures:
        assert set(fixture.seats) == set(bots[start : start + len(fixture.seats)])
        start += len(fixture.seats)


@FAST
@given(entries(), seeds)
def test_the_same_standings_again_never_repeat_a_table(drawn, seed) -> None:
    bots, k = drawn
    standings = [(bot, float(-i)) for i, bot in enumerate(bots)]
    first = swiss_round(standings, k, 0, seed, set())
    if len(first) < 2:
        return
    history = {frozenset(f.seats) for f in first}
    assert repeated_tables(swiss_round(standings, k, 1, seed, history), history) == 0


@FAST
@given(entries(), seeds)
def test_five_rounds_never_repeat_a_table_when_there_are_two_tables_or_more(drawn, seed) -> None:
    bots, k = drawn
    if len(swiss_table_sizes(len(bots), k)) < 2:
        return
    history: set[frozenset[int]] = set()
    for fixtures in play_rounds(bots, k, 5, seed):
        assert repeated_tables(fixtures, history) == 0
        history |= {frozenset(f.seats) for f in fixtures}


@FAST
@given(entries(max_bots=24), seeds)
def test_byes_go_round_before_anyone_gets_a_second(drawn, seed) -> None:
    bots, k = drawn
    per_round = len(bots) - sum(swiss_table_sizes(len(bots), k))
    if per_round == 0:
        return
    rounds = len(bots) // per_round
    byes: Counter[int] = Counter()
    for fixtures in play_rounds(bots, k, rounds, seed):
        byes.update(set(bots) - {bot for f in fixtures for bot in f.seats})
    assert max(byes.values()) == 1


@FAST
@given(entries(max_bots=24), seeds)
def test_seat_history_keeps_each_bot_seat_counts_close_at_full_tables(drawn, seed) -> None:
    bots, k = drawn
    bots = bots[: len(bots) // k * k]
    played = play_rounds(bots, k, 2 * k, seed, with_seats=True)
    counts = seat_counts(f for fixtures in played for f in fixtures)
    for per_bot in counts.values():
        per_seat = [per_bot[seat] for seat in range(k)]
        assert max(per_seat) - min(per_seat) <= 2


@FAST
@given(entries(max_bots=20), seeds)
def test_the_same_inputs_give_the_same_round(drawn, seed) -> None:
    bots, k = drawn
    standings = [(bot, float(i % 3)) for i, bot in enumerate(bots)]
    assert swiss_round(standings, k, 2, seed, set()) == swiss_round(standings, k, 2, seed, set())


def test_a_bot_listed_twice_or_too_few_bots_is_refused() -> None:
    with pytest.raises(FixtureError, match="each bot once"):
        swiss_round([(1, 0.0), (1, 1.0), (2, 0.0), (3, 0.0)], 3, 0, 0, set())
    with pytest.raises(FixtureError, match="at least 3"):
        swiss_round([(1, 0.0), (2, 0.0)], 3, 0, 0, set())
