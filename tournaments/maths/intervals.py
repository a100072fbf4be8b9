"""Batch Plackett-Luce strengths of a rated history, and bootstrap intervals on the ranks.

The live TrueSkill ratings are updated match by match, so they depend on the order the matches
were played in; a batch fit of the whole history at once does not. Each match's finishing order
is one Plackett-Luce observation (the winner chosen out of the table in proportion to strength,
then the second out of the rest, and so on), fitted by choix's iterative Luce spectral ranking.

Equal places are taken as Breslow takes tied times in a proportional-hazards fit: each tied bot
is chosen out of every bot not above it, its tied partners included. Without ties that is the
plain Plackett-Luce order; with them no order among the tied bots is invented, each is credited
with finishing above every bot below, and the tie itself pulls their strengths together.

The interval of a bot's rank is a bootstrap: the units (a match, or the rotations of a duplicate
group, which share their deals and so are drawn together) are drawn with replacement as many as
there are, the strengths refitted and the bots ranked again, many times over; the interval runs
from the 5th to the 95th percentile of the ranks the bot got.

Pure: finishing orders in, strengths and ranks out, randomness only from the numpy Generator
passed in; no Django, so a bench can use it as it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import choix
import numpy as np
from numpy.typing import NDArray

# The interval runs between these percentiles of the resampled ranks: 90% of them lie within.
LOW_PERCENTILE = 5
HIGH_PERCENTILE = 95
LEVEL_PERCENT = HIGH_PERCENTILE - LOW_PERCENTILE
# choix's regularisation of Luce spectral ranking (its ``alpha``): a small rate between every pair
# of bots, so an unbeaten bot's strength stays finite and bots that never met share one scale;
# small beside what one match adds between two bots of average strength (1/2 at a table of two,
# 1/8 at a table of eight), so it hardly moves a fit of real matches.
REGULARISATION = 0.01
# Iterations of spectral ranking allowed and the change of the strengths (summed) that ends them.
MAX_ITERATIONS = 1000
TOLERANCE = 1e-6

TOO_FEW_MATCHES = "too few matches for an interval"

Choice = tuple[int, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class Finish:
    """One match's finishing order: its bots and their places (1 best; equal places tie)."""

    bots: tuple[int, ...]
    places: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class BotRank:
    """A bot's place in the fit of the whole history, and its interval over the refits."""

    bot: int
    rank: int
    low: int
    high: int
    strength: float
    matches: int


@dataclass(frozen=True, slots=True)
class RankIntervals:
    """The fit of a history with its bootstrap.

    ``ranks`` has one entry per bot, best first; ``samples`` the ranks of every refit, one row
    per resample and one column per bot of ``bots``; ``draws`` the units each resample drew.
    """

    bots: tuple[int, ...]
    ranks: list[BotRank]
    samples: NDArray[np.int64]
    draws: NDArray[np.int64]


def choices(finish: Finish, index: Mapping[int, int]) -> list[Choice]:
    """The Plackett-Luce choices of one finish (ties as Breslow takes them), as choix's top-1
    data: each bot's column in ``index``, and the columns of the others it was chosen over."""
    found: list[Choice] = []
    for bot, place in zip(finish.bots, finish.places, strict=True):
        rest = tuple(
            index[other]
            for other, other_place in zip(finish.bots, finish.places, strict=True)
            if other != bot and other_place >= place
        )
        if rest:
            found.append((index[bot], rest))
    return found


def fit(
    data: Sequence[Choice],
    size: int,
    *,
    alpha: float = REGULARISATION,
    initial: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """The log-strengths (mean 0) of ``size`` bots from choix top-1 ``data``."""
    if size < 2 or not data:
        return np.zeros(size)
    strengths = choix.ilsr_top1(
        size, data, alpha=alpha, initial_params=initial, max_iter=MAX_ITERATIONS, tol=TOLERANCE
    )
    return np.asarray(strengths, dtype=np.float64)


def strengths(finishes: Iterable[Finish], *, alpha: float = REGULARISATION) -> dict[int, float]:
    """Each bot's log-strength (mean 0 over the bots) fitted from ``finishes`` at once."""
    finishes = list(finishes)
    bots = sorted({bot for finish in finishes for bot in finish.bots})
    index = {bot: i for i, bot in enumerate(bots)}
    data = [choice for finish in finishes for choice in choices(finish, index)]
    return dict(zip(bots, fit(data, len(bots), alpha=alpha).tolist(), strict=True))


def ranks_of(values: NDArray[np.float64]) -> NDArray[np.int64]:
    """Competition ranks of strengths, strongest 1 (equal strengths share a rank)."""
    ranks: NDArray[np.int64] = 1 + (values[None, :] > values[:, None]).sum(axis=1)
    return ranks


def draw(units: int, resamples: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Which units each resample takes: ``units`` of them drawn with replacement, per row."""
    return rng.integers(0, units, size=(resamples, units))


def percentile_ranks(samples: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The 5th and 95th percentile rank of each column: ranks a resample gave, never between."""
    low, high = np.percentile(
        samples, [LOW_PERCENTILE, HIGH_PERCENTILE], axis=0, method="inverted_cdf"
    )
    return low.astype(np.int64), high.astype(np.int64)


def bootstrap(
    units: Sequence[Sequence[Finish]],
    *,
    resamples: int,
    rng: np.random.Generator,
    alpha: float = REGULARISATION,
) -> RankIntervals:
    """Fit ``units`` (each a match, or matches drawn together) and bootstrap every bot's rank."""
    bots = tuple(sorted({bot for unit in units for finish in unit for bot in finish.bots}))
    index = {bot: i for i, bot in enumerate(bots)}
    data = [[c for finish in unit for c in choices(finish, index)] for unit in units]
    whole = fit([c for unit in data for c in unit], len(bots), alpha=alpha)
    draws = draw(len(units), resamples, rng)
    samples = np.empty((resamples, len(bots)), dtype=np.int64)
    for row, drawn in enumerate(draws):
        # Started from the whole fit, which a resample is near: a few iterations instead of many.
        refit = fit([c for u in drawn for c in data[u]], len(bots), alpha=alpha, initial=whole)
        samples[row] = ranks_of(refit)
    matches = Counter(bot for unit in units for finish in unit for bot in finish.bots)
    rank = ranks_of(whole)
    low, high = percentile_ranks(samples) if resamples else (rank, rank)
    ranks = [
        BotRank(
            bot=bot,
            rank=int(rank[i]),
            low=int(low[i]),
            high=int(high[i]),
            strength=float(whole[i]),
            matches=matches[bot],
        )
        for i, bot in enumerate(bots)
    ]
    ranks.sort(key=lambda r: (r.rank, r.bot))
    return RankIntervals(bots=bots, ranks=ranks, samples=samples, draws=draws)


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, ... 21st."""
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def interval_text(rank: int, low: int | None, high: int | None) -> str:
    """The rank and its interval in words: "3rd; 2nd-5th at 90%"."""
    if low is None or high is None:
        return f"{ordinal(rank)}; {TOO_FEW_MATCHES}"
    span = ordinal(low) if low == high else f"{ordinal(low)}-{ordinal(high)}"
    return f"{ordinal(rank)}; {span} at {LEVEL_PERCENT}%"
