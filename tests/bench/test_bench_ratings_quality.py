"""The pure parts of bench/bench_ratings_quality.py's field study: schedules, the ways of
turning games into rating updates, and the measures (tau, seat luck, prediction, coverage)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from bench import bench_ratings_quality as bench
from engine.presets import preset
from engine.simulate import play_game
from tournaments.formats.common import Fixture
from tournaments.maths.intervals import BotRank, Finish
from tournaments.maths.ratings import RatingParams


def test_kendall_counts_pairs_against_the_true_order_not_the_bot_numbers() -> None:
    order = [2, 0, 1]  # bot 2 strongest
    assert bench.kendall([5.0, 1.0, 9.0], order) == (1.0, 0)
    assert bench.kendall([9.0, 5.0, 1.0], order) == (pytest.approx(-1 / 3), 2)
    # A level pair counts neither way.
    assert bench.kendall([5.0, 5.0, 9.0], order) == (pytest.approx(2 / 3), 0)


def test_seat_luck_correlation_is_one_when_the_deal_decides_and_zero_when_it_does_not() -> None:
    rng = random.Random(3)
    decided = []
    independent = []
    for _ in range(400):
        seat_luck = [rng.gauss(0, 1) for _ in range(4)]
        decided.append([list(seat_luck) for _ in range(4)])
        independent.append([[rng.gauss(0, 1) for _ in range(4)] for _ in range(4)])
    assert bench.seat_luck_correlation(decided) == pytest.approx(1.0)
    assert abs(bench.seat_luck_correlation(independent)) < 0.05
    # Half the variance from the seat's cards: about 0.5.
    halves = [
        [[luck + rng.gauss(0, 1) for luck in seat_luck] for _ in range(4)]
        for seat_luck in ([rng.gauss(0, 1) for _ in range(4)] for _ in range(400))
    ]
    assert bench.seat_luck_correlation(halves) == pytest.approx(0.5, abs=0.06)


def test_pairwise_error_skips_level_finishes_and_counts_level_scores_half() -> None:
    finishes = [Finish((0, 1, 2), (1, 2, 2)), Finish((2, 0), (1, 2))]
    # Pairs scored: 0 over 1, 0 over 2, 2 over 0 (1 and 2 finished level: skipped).
    assert bench.pairwise_error([3.0, 2.0, 1.0], finishes) == pytest.approx(1 / 3)
    assert bench.pairwise_error([1.0, 1.0, 1.0], finishes) == pytest.approx(0.5)
    assert bench.pairwise_error([2.0, 0.0, 3.0], finishes) == pytest.approx(1 / 3)


def test_coverage_counts_true_ranks_inside_their_intervals() -> None:
    ranks = [
        BotRank(bot=0, rank=1, low=1, high=2, strength=1.0, matches=5),
        BotRank(bot=1, rank=2, low=1, high=3, strength=0.0, matches=5),
        BotRank(bot=2, rank=3, low=3, high=3, strength=-1.0, matches=5),
    ]
    assert bench.coverage(ranks, [2, 1, 3]) == (3, 3)
    assert bench.coverage(ranks, [3, 2, 1]) == (1, 3)


def test_truth_orders_bots_by_mean_points() -> None:
    tables = [((0, 1), (10, 30)), ((1, 2), (20, 40)), ((2, 0), (50, 12))]
    found = bench.truth(3, tables)
    assert found.means == [11, 25, 45]
    assert found.order == [2, 1, 0]
    assert found.ranks == [3, 2, 1]


def _scores(totals: list[int]) -> list[list[int]]:
    return [[t] for t in totals]  # one deal a game


def test_concurrent_steps_rank_every_bot_of_a_round_by_points_across_tables() -> None:
    fixtures = [Fixture(0, 0, (0, 1), 11), Fixture(0, 1, (2, 3), 12), Fixture(1, 0, (0, 2), 13)]
    games: dict[tuple[int, tuple[int, ...]], list[list[int]]] = {
        (11, (0, 1)): _scores([5, 30]),
        (12, (2, 3)): _scores([20, 5]),
        (13, (0, 2)): _scores([1, 2]),
    }
    steps = bench.concurrent_steps(fixtures, games)
    assert [s.matches for s in steps] == [2, 1]
    assert steps[0].finishes == (Finish((0, 1, 2, 3), (3, 1, 2, 3)),)


def test_batch_steps_gather_whole_rounds_until_a_refit_is_due(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Rounds of 3 tables: the first update waits for 6 tables (>= 5), the rest is the last one.
    fixtures = [Fixture(r, t, (t, t + 3), r * 10 + t) for r in range(3) for t in range(3)]
    games = {(f.seed, f.seats): _scores([f.seed % 2, 1 - f.seed % 2]) for f in fixtures}
    monkeypatch.setattr(bench, "REFIT_EVERY", 5)
    steps = bench.batch_steps(fixtures, games)
    assert [s.matches for s in steps] == [6, 3]
    assert [len(s.finishes) for s in steps] == [6, 3]
    assert steps[0].finishes[:2] == (Finish((0, 3), (2, 1)), Finish((1, 4), (1, 2)))
    assert steps[1].finishes[0] == Finish((0, 3), (2, 1))


def test_board_steps_compare_each_seat_with_the_same_seat_at_the_other_tables() -> None:
    # One deal at both tables: seat 0 was dealt a hand worth 20 more points than seat 1's.
    fixtures = [Fixture(0, 0, (0, 1), 7, "board 0"), Fixture(0, 1, (2, 3), 7, "board 0")]
    games: dict[tuple[int, tuple[int, ...]], list[list[int]]] = {
        (7, (0, 1)): _scores([40, 20]),
        (7, (2, 3)): _scores([30, 14]),
    }
    (step,) = bench.board_steps(fixtures, games)
    # Bot 3 (14 at seat 1, 3 below its seat's mean) ranks above bot 2 (30 at seat 0, 5 below),
    # and bot 1 (20) above both: raw points would put bot 2 second.
    assert step.matches == 2
    assert step.finishes == (Finish((0, 1, 2, 3), (1, 2, 4, 3)),)


def test_shuffled_rounds_keep_every_round_whole() -> None:
    fixtures = [Fixture(r, t, (t,), r * 10 + t) for r in range(6) for t in range(3)]
    shuffled = bench.shuffled_rounds(fixtures, random.Random(1))
    assert sorted(shuffled, key=lambda f: f.seed) == fixtures
    rounds = [f.round for f in shuffled]
    assert [rounds[i] for i in range(0, 18, 3)] != list(range(6))
    assert all(len(set(rounds[i : i + 3])) == 1 for i in range(0, 18, 3))


def test_field_fixtures_seat_the_whole_field_each_round_and_share_deals_as_the_pool_says() -> None:
    n = 16
    for pool in bench.Pool:
        fixtures = bench.field_fixtures(n, pool, 0, 64)
        assert len(fixtures) == 64
        for members in bench._rounds(fixtures):
            bots = sorted(b for f in members for b in f.seats)
            times = len(members) * 4 // n
            assert bots == sorted(list(range(n)) * times)
    boards = bench.field_fixtures(n, bench.Pool.BOARDS, 0, 64)
    assert all(len({f.seed for f in r}) == 1 for r in bench._rounds(boards))
    random_deals = bench.field_fixtures(n, bench.Pool.RANDOM, 0, 64)
    assert len({f.seed for f in random_deals}) == 64
    rotations = bench.field_fixtures(n, bench.Pool.ROTATIONS, 0, 64)
    groups = bench._groups(rotations)
    assert all(len(g) == 4 and len({f.seed for f in g}) == 1 for g in groups)
    assert all(sorted(g[0].seats) == sorted(g[1].seats) for g in groups)
    # Repetitions and pools deal apart from one another.
    assert not {f.seed for f in random_deals} & {
        f.seed for f in bench.field_fixtures(n, bench.Pool.RANDOM, 1, 64)
    }


def _finishes(n: int, games: int, seed: int) -> list[Finish]:
    """Tables of 4 where bot 0 is strongest: performance = strength + noise."""
    rng = random.Random(seed)
    found = []
    for _ in range(games):
        bots = rng.sample(range(n), 4)
        perf = [-3.0 * b + rng.gauss(0, 2) for b in bots]
        places = tuple(1 + sum(q > p for q in perf) for p in perf)
        found.append(Finish(tuple(bots), places))
    return found


@pytest.mark.parametrize("rater", ["trueskill", "openskill", "batch"])
def test_every_rater_orders_a_clearly_graded_field(rater: str) -> None:
    n = 6
    makers: dict[str, Callable[[], bench.Rater]] = {
        "trueskill": lambda: bench.TrueSkillRater(n, RatingParams()),
        "openskill": lambda: bench.OpenSkillRater(n),
        "batch": lambda: bench.BatchRater(n),
    }
    made = makers[rater]()
    updates = [bench.Update(1, (f,)) for f in _finishes(n, 400, 5)]
    run = bench.measure(updates, made, 400, list(range(n)))
    assert run.tau_at[400] == 1.0
    assert run.first_good is not None and run.first_good < 400
    assert 0.5 < run.share_good < 1.0
    assert sorted(run.means_at) == [100, 200, 400]


def test_a_run_that_never_reaches_the_threshold_is_censored() -> None:
    n = 6
    reversed_order = list(range(n))[::-1]
    updates = [bench.Update(1, (f,)) for f in _finishes(n, 200, 6)]
    run = bench.measure(updates, bench.TrueSkillRater(n, RatingParams()), 200, reversed_order)
    assert run.first_good is None
    assert run.share_good == 0.0
    assert run.tau_at[200] < 0


def test_the_rule_player_plays_legal_games_and_its_offset_moves_its_bids() -> None:
    variant = preset("oh-hell")
    seats = [bench.RulePlayer(0, bid_offset=o) for o in (-1.0, 0.0, 1.0)]
    seats.append(bench.RulePlayer(0, counts_cards=False, overtricks=True))
    game = play_game(variant, 4, 11, seats)
    assert game.is_over
    bids = [sum(d.bids[s] for d in game.deals) for s in range(4)]
    assert bids[0] < bids[1] < bids[2]
