"""The batch Plackett-Luce fit and its bootstrap: checked against a fit and percentiles
computed here, on small histories made up with fixed seeds."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import choix
import numpy as np
import pytest

from tournaments.maths.intervals import (
    Finish,
    bootstrap,
    interval_text,
    ordinal,
    ranks_of,
    strengths,
)

BOTS = 5


def _random_finishes(seed: int, count: int, *, ties: bool) -> list[Finish]:
    """Tables of three or four of the bots, in random order; with ties, some places shared."""
    rng = np.random.default_rng(seed)
    finishes = []
    for _ in range(count):
        table = rng.choice(BOTS, size=int(rng.integers(3, 5)), replace=False)
        if ties:
            places = tuple(int(p) for p in rng.integers(1, 4, size=len(table)))
        else:
            places = tuple(range(1, len(table) + 1))
        finishes.append(Finish(bots=tuple(int(b) for b in table), places=places))
    return finishes


def _simulated_finishes(planted: list[float], count: int, seed: int) -> list[Finish]:
    """Four-bot tables whose orders are drawn from Plackett-Luce with the planted strengths."""
    rng = np.random.default_rng(seed)
    finishes = []
    for _ in range(count):
        left = [int(b) for b in rng.choice(len(planted), size=4, replace=False)]
        order = []
        while left:
            weights = np.exp([planted[b] for b in left])
            order.append(left.pop(int(rng.choice(len(left), p=weights / weights.sum()))))
        finishes.append(Finish(bots=tuple(order), places=(1, 2, 3, 4)))
    return finishes


def _hunter_mm(finishes: list[Finish], *, rounds: int = 20000) -> dict[int, float]:
    """Hunter's MM fit of Plackett-Luce, ties as Breslow takes them: a bot at place p is chosen
    out of every bot at p or below. Centred log-strengths."""
    bots = sorted({b for f in finishes for b in f.bots})
    gamma = dict.fromkeys(bots, 1.0)
    for _ in range(rounds):
        wins: Counter[int] = Counter()
        exposure: defaultdict[int, float] = defaultdict(float)
        for f in finishes:
            for bot, place in zip(f.bots, f.places, strict=True):
                risk = [o for o, p in zip(f.bots, f.places, strict=True) if p >= place]
                if len(risk) < 2:
                    continue
                wins[bot] += 1
                total = sum(gamma[o] for o in risk)
                for o in risk:
                    exposure[o] += 1 / total
        new = {b: wins[b] / exposure[b] for b in bots}
        mean_log = sum(math.log(v) for v in new.values()) / len(new)
        new = {b: v / math.exp(mean_log) for b, v in new.items()}
        change = max(abs(math.log(new[b]) - math.log(gamma[b])) for b in bots)
        gamma = new
        if change < 1e-12:
            break
    return {b: math.log(v) for b, v in gamma.items()}


def test_the_fit_with_ties_is_the_maximum_likelihood_a_hand_written_mm_fit_finds() -> None:
    finishes = _random_finishes(seed=3, count=80, ties=True)
    assert any(len(set(f.places)) < len(f.places) for f in finishes)
    fitted = strengths(finishes, alpha=0.0)
    expected = _hunter_mm(finishes)
    assert set(fitted) == set(range(BOTS))
    assert max(abs(fitted[b] - expected[b]) for b in expected) < 1e-4
    assert sorted(fitted, key=fitted.__getitem__) == sorted(expected, key=expected.__getitem__)


def test_without_ties_the_fit_is_choix_plackett_luce_fit_of_the_orders() -> None:
    finishes = _random_finishes(seed=4, count=80, ties=False)
    fitted = strengths(finishes, alpha=0.0)
    orders = [f.bots for f in finishes]  # places 1, 2, ...: the seats' order is the finish
    expected = choix.ilsr_rankings(BOTS, orders, alpha=0.0, tol=1e-10)
    assert max(abs(fitted[b] - expected[b]) for b in range(BOTS)) < 1e-4


def test_the_fit_recovers_a_planted_order_of_strengths() -> None:
    planted = [0.9, -0.6, 0.3, -1.2, 1.5, -0.0]
    finishes = _simulated_finishes(planted, count=800, seed=11)
    fitted = strengths(finishes)
    assert sorted(fitted, key=lambda b: -fitted[b]) == [4, 0, 2, 5, 1, 3]


def test_an_unbeaten_bot_ranks_first_with_a_finite_strength() -> None:
    finishes = [Finish(bots=(7, a, b), places=(1, 2, 3)) for a, b in [(8, 9), (9, 8)] * 6]
    fitted = strengths(finishes)
    assert all(math.isfinite(v) for v in fitted.values())
    assert max(fitted, key=fitted.__getitem__) == 7


def test_bootstrap_percentiles_are_those_of_refits_on_the_same_resamples() -> None:
    finishes = _random_finishes(seed=5, count=40, ties=True)
    units = [[f] for f in finishes[:30]] + [finishes[30:35], finishes[35:]]
    resamples = 25
    result = bootstrap(units, resamples=resamples, rng=np.random.default_rng(7))

    # The resamples: as many units as there are, drawn with replacement, from the same seed.
    draws = np.random.default_rng(7).integers(0, len(units), size=(resamples, len(units)))
    assert (result.draws == draws).all()
    samples = []
    for row in draws:
        fitted = strengths([f for u in row for f in units[u]])
        assert set(fitted) == set(result.bots)
        ordered = sorted(fitted, key=lambda b: -fitted[b])
        samples.append([ordered.index(b) + 1 for b in result.bots])
    assert result.samples.tolist() == samples

    whole = strengths(finishes)
    ordered = sorted(whole, key=lambda b: -whole[b])
    for column, bot in enumerate(result.bots):
        ranks = sorted(row[column] for row in samples)
        line = next(r for r in result.ranks if r.bot == bot)
        # The 5th and 95th percentiles as the smallest rank at least that share of refits reach.
        assert line.low == ranks[math.ceil(0.05 * resamples) - 1]
        assert line.high == ranks[math.ceil(0.95 * resamples) - 1]
        assert line.rank == ordered.index(bot) + 1
        assert line.strength == pytest.approx(whole[bot], abs=1e-6)
        assert line.matches == sum(bot in f.bots for f in finishes)
    assert [r.rank for r in result.ranks] == sorted(r.rank for r in result.ranks)


def test_the_intervals_of_well_separated_bots_hold_their_planted_ranks() -> None:
    planted = [1.2, 0.0, -1.2, 0.6, -0.6]
    units = [[f] for f in _simulated_finishes(planted, count=400, seed=12)]
    result = bootstrap(units, resamples=30, rng=np.random.default_rng(1))
    true_rank = {0: 1, 3: 2, 1: 3, 4: 4, 2: 5}
    for line in result.ranks:
        assert line.low <= true_rank[line.bot] <= line.high
        assert line.rank == true_rank[line.bot]


def test_equal_strengths_share_a_rank() -> None:
    assert ranks_of(np.array([0.5, -1.0, 0.5, 2.0])).tolist() == [2, 4, 2, 1]


@pytest.mark.parametrize(
    ("n", "word"),
    [
        *[(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th")],
        *[(13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"), (101, "101st"), (111, "111th")],
    ],
)
def test_ordinals_read_as_english(n, word) -> None:
    assert ordinal(n) == word


def test_an_interval_reads_as_its_rank_and_span_at_90_percent() -> None:
    assert interval_text(3, 2, 5) == "3rd; 2nd-5th at 90%"
    assert interval_text(1, 1, 1) == "1st; 1st at 90%"
    assert interval_text(4, None, None) == "4th; too few matches for an interval"
