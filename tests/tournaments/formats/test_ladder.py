"""Ladder: full distinct tables, the focus rule, close ratings, randomness, and no starvation."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.formats import FixtureError, LadderBot, LadderParams, ladder_pick

FAST = settings(max_examples=15, deadline=None)
# One quality evaluation per pick keeps long runs fast; the choice of bots is unchanged.
QUICK = LadderParams(drafts=1)


@st.composite
def ladders(draw: st.DrawFn) -> tuple[list[LadderBot], int]:
    """Draw a table size and bots with skewed ratings and uncertainties, all new to the ladder."""
    table_size = draw(st.integers(3, 8))
    count = draw(st.integers(table_size, 40))
    mus = draw(st.lists(st.floats(0, 50), min_size=count, max_size=count))
    sigmas = draw(st.lists(st.sampled_from([0.5, 2.0, 8.33, 20.0]), min_size=count, max_size=count))
    bots = [
        LadderBot(i, 0, mu, sigma) for i, (mu, sigma) in enumerate(zip(mus, sigmas, strict=True))
    ]
    return bots, table_size


def run(bots: list[LadderBot], table_size: int, picks: int, seed: int, params=QUICK):
    """Play `picks` ladder tables, counting games; return the widest games gap seen."""
    rng = random.Random(seed)
    games = dict.fromkeys((bot.id for bot in bots), 0)
    widest = 0
    for _ in range(picks):
        waiting = [LadderBot(b.id, games[b.id], b.mu, b.sigma) for b in bots]
        seats = ladder_pick(waiting, table_size, rng, params)
        assert len(seats) == len(set(seats)) == table_size
        for bot in seats:
            games[bot] += 1
        widest = max(widest, max(games.values()) - min(games.values()))
    return widest


@FAST
@given(ladders(), st.integers(0, 2**32))
def test_no_bot_falls_more_than_the_allowed_gap_plus_one_behind(drawn, seed):
    bots, table_size = drawn
    picks = 4 * len(bots) // table_size + 10
    assert run(bots, table_size, picks, seed) <= QUICK.max_gap + 1


def test_the_gap_stays_bounded_over_a_long_run_with_default_parameters():
    rng = random.Random(5)
    bots = [LadderBot(i, 0, rng.uniform(0, 50), rng.choice([0.5, 20.0])) for i in range(13)]
    assert run(bots, 4, 150, seed=1, params=LadderParams()) <= LadderParams().max_gap + 1


def test_the_bot_with_the_fewest_games_is_always_seated():
    bots = [LadderBot(i, 10, 25.0, 8.0) for i in range(12)] + [LadderBot(99, 0, 50.0, 1.0)]
    for seed in range(20):
        assert 99 in ladder_pick(bots, 4, random.Random(seed))


def test_among_the_least_played_the_widest_uncertainty_is_seated():
    bots = [LadderBot(i, 3, 25.0, 1.0) for i in range(12)] + [LadderBot(42, 3, 25.0, 9.0)]
    for seed in range(20):
        assert 42 in ladder_pick(bots, 3, random.Random(seed))


def test_opponents_come_from_close_ratings():
    low = [LadderBot(i, 0, 10.0 + i / 10, 1.0) for i in range(10)]
    high = [LadderBot(100 + i, 0, 40.0 + i / 10, 1.0) for i in range(10)]
    focus = LadderBot(77, 0, 40.5, 5.0)
    for seed in range(10):
        table = ladder_pick([*low, *high, focus], 5, random.Random(seed))
        assert all(bot == 77 or bot >= 100 for bot in table)


def test_picks_vary_with_the_generator_and_repeat_with_the_same_seed():
    bots = [LadderBot(i, 0, 25.0, 8.33) for i in range(20)]
    tables = {frozenset(ladder_pick(bots, 4, random.Random(seed))) for seed in range(10)}
    assert len(tables) > 1
    assert ladder_pick(bots, 4, random.Random(3)) == ladder_pick(bots, 4, random.Random(3))


def test_bots_far_ahead_in_games_sit_out_while_enough_others_can_play():
    ahead = [LadderBot(i, 20, 25.0, 8.33) for i in range(5)]
    behind = [LadderBot(10 + i, 0, 0.0, 8.33) for i in range(5)]
    for seed in range(10):
        assert set(ladder_pick([*ahead, *behind], 5, random.Random(seed))) == {10, 11, 12, 13, 14}


def test_too_few_or_repeated_candidates_are_refused():
    with pytest.raises(FixtureError, match="cannot fill a table of 4"):
        ladder_pick([LadderBot(i, 0, 25.0, 8.33) for i in range(3)], 4, random.Random(0))
    with pytest.raises(FixtureError, match="each bot once"):
        ladder_pick([LadderBot(1, 0, 25.0, 8.33)] * 3, 3, random.Random(0))
