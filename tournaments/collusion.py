"""Collusion between two bots, read from the finishing orders of the tables they shared.

Two bots of different accounts can still work together at a table: one (the partner) bids and
plays to let the other (the beneficiary) make its bids, and gives up its own result for it.
That leaves a trace in the results, which this module tests for every pair of bots.

A bot's result at a table is measured against the *other* bots there only, never against the
partner under test (beating the partner is what a sacrifice gives away, and beating a weak
honest bot is no sign of anything): for each other bot, 1 if it finished above it, a half for
an equal place, 0 below, less the chance the batch strengths give it of finishing above that bot
(Plackett-Luce log-strengths of the same history, tournaments/maths/intervals.py, whose pairwise
chances are exp(a) / (exp(a) + exp(b))). The residuals are averaged over the other bots at the
table, so a table of strong opponents and a table of weak ones count alike. A duplicate group's
rotations share their deals, so they are one unit: the residuals are averaged over them.

For a pair (A, B) at ``tables`` units of three or more bots:

- A's lift: A's mean residual at the units with B less its mean at its units without B;
- B's drop: B's mean residual at its units without A less its mean at the units with A;
- the statistic: (lift + drop) over its standard error, the variance of A's residual less B's
  at the shared units (they face the same other bots, so the two are taken together) over their
  number, plus those of A's and B's residuals at their units apart over theirs (separate units,
  so independent of each other and of the shared ones).

With no collusion the lift and the drop are both around 0 and the statistic is close to
standard normal once there are a few tens of units of each kind; helping moves it up. (B's lift
plus A's drop is exactly minus it, so each pair is tested once, both ways: a two-sided p-value,
the beneficiary being the one the statistic favours.) The p-values of all pairs tested are
adjusted by Benjamini-Hochberg, and a pair is flagged when its adjusted p-value is at most the
false-discovery rate asked for: of the pairs flagged, that share at most are expected honest.
A flagged pair's shared tables are then set aside and the rest tested again (``detect``), so
the trace one pair leaves on its neighbours' results does not get them flagged too.

Pure: finishing orders in, evidence out; no Django, so a bench can use it as it is.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

from tournaments.maths.intervals import Finish, strengths


@dataclass(frozen=True, slots=True)
class PairEvidence:
    """The test of one pair, with the beneficiary the statistic points to.

    Results are shares of the other bots at a table (never the pair) a bot finished above
    (a half for an equal place), raw as played; ``lift`` and ``drop`` are of the same shares
    less what the strengths predict, so a change of opponents does not move them.
    """

    beneficiary: int
    partner: int
    tables: int
    beneficiary_with: float
    beneficiary_without: float
    partner_with: float
    partner_without: float
    lift: float
    drop: float
    z: float
    p_value: float
    adjusted_p: float
    flagged: bool


@dataclass(slots=True)
class _Moments:
    """Count, sum and sum of squares of one series, with the sum of a raw share beside."""

    n: int = 0
    total: float = 0.0
    squares: float = 0.0
    raw: float = 0.0

    def add(self, value: float, raw: float) -> None:
        self.n += 1
        self.total += value
        self.squares += value * value
        self.raw += raw

    def less(self, other: _Moments) -> _Moments:
        return _Moments(
            self.n - other.n,
            self.total - other.total,
            self.squares - other.squares,
            self.raw - other.raw,
        )

    @property
    def mean(self) -> float:
        return self.total / self.n

    @property
    def raw_mean(self) -> float:
        return self.raw / self.n

    @property
    def variance(self) -> float:
        """The sample variance (n - 1 in the denominator), never below 0 by rounding."""
        return max(0.0, (self.squares - self.total * self.total / self.n) / (self.n - 1))


@dataclass(slots=True)
class _Together:
    """What the units a pair shared add up to: both bots' residuals apart from each other."""

    gap: _Moments = field(default_factory=_Moments)  # first's residual less second's
    first: _Moments = field(default_factory=_Moments)
    second: _Moments = field(default_factory=_Moments)
    # The two bots' results against everyone at every shared unit (any size), to take away
    # from their totals for their units apart.
    first_all: _Moments = field(default_factory=_Moments)
    second_all: _Moments = field(default_factory=_Moments)


@dataclass(frozen=True, slots=True)
class _Unit:
    """One unit's residual and raw share of each bot against each other bot there."""

    bots: tuple[int, ...]
    residual: dict[tuple[int, int], float]
    raw: dict[tuple[int, int], float]

    def against(self, bot: int, leaving_out: int | None) -> tuple[float, float]:
        """The bot's mean residual and raw share against the others but ``leaving_out``."""
        others = [o for o in self.bots if o != leaving_out and (bot, o) in self.residual]
        res = sum(self.residual[bot, o] for o in others) / len(others)
        raw = sum(self.raw[bot, o] for o in others) / len(others)
        return res, raw


def _unit(finishes: Sequence[Finish], strength: dict[int, float]) -> _Unit:
    """Average each bot's outcome against each other bot over the unit's finishes."""
    residual: dict[tuple[int, int], float] = defaultdict(float)
    raw: dict[tuple[int, int], float] = defaultdict(float)
    seen: dict[tuple[int, int], int] = defaultdict(int)
    for finish in finishes:
        place = dict(zip(finish.bots, finish.places, strict=True))
        for bot, other in combinations(place, 2):
            for x, y in ((bot, other), (other, bot)):
                outcome = 1.0 if place[x] < place[y] else 0.5 if place[x] == place[y] else 0.0
                expected = 1.0 / (1.0 + math.exp(strength[y] - strength[x]))
                residual[x, y] += outcome - expected
                raw[x, y] += outcome
                seen[x, y] += 1
    for key, count in seen.items():
        residual[key] /= count
        raw[key] /= count
    bots = tuple(sorted({bot for finish in finishes for bot in finish.bots}))
    return _Unit(bots, dict(residual), dict(raw))


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values, in the order given (each at most 1)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = running
    return adjusted


def detect(
    units: Sequence[Sequence[Finish]], *, min_tables: int, false_discovery_rate: float
) -> list[PairEvidence]:
    """Test every pair that shared at least ``min_tables`` units of three or more bots and has
    at least as many units apart each; flag those whose adjusted p-value is at most
    ``false_discovery_rate``. Flagged pairs first, then the rest, strongest evidence first.

    One pair's sacrifice moves its neighbours' results a little too (the others at its tables
    beat the partner more often), so the pairs are taken one at a time: the strongest flagged
    pair is kept with its evidence, the units it shared are set aside, and the rest are tested
    again (strengths refitted, p-values adjusted over the pairs still tested), until a pass
    flags nothing.
    """
    left = list(units)
    flagged: list[PairEvidence] = []
    while True:
        found = _test_all(left, min_tables, false_discovery_rate)
        if not found or not found[0].flagged:
            return flagged + found
        top = found[0]
        flagged.append(top)
        pair = {top.beneficiary, top.partner}
        left = [u for u in left if not pair <= {bot for finish in u for bot in finish.bots}]


def _test_all(
    units: Sequence[Sequence[Finish]], min_tables: int, false_discovery_rate: float
) -> list[PairEvidence]:
    """One pass: every pair tested on ``units``, p-values adjusted together, best first."""
    strength = strengths(finish for unit in units for finish in unit)
    totals: dict[int, _Moments] = defaultdict(_Moments)
    together: dict[tuple[int, int], _Together] = defaultdict(_Together)
    for finishes in units:
        unit = _unit(finishes, strength)
        full = {bot: unit.against(bot, None) for bot in unit.bots if len(unit.bots) > 1}
        for bot, (res, raw) in full.items():
            totals[bot].add(res, raw)
        for first, second in combinations(unit.bots, 2):
            pair = together[first, second]
            pair.first_all.add(*full[first])
            pair.second_all.add(*full[second])
            if len(unit.bots) < 3:
                continue
            a, a_raw = unit.against(first, second)
            b, b_raw = unit.against(second, first)
            pair.gap.add(a - b, 0.0)
            pair.first.add(a, a_raw)
            pair.second.add(b, b_raw)
    found: list[PairEvidence] = []
    for (first, second), pair in sorted(together.items()):
        apart_first = totals[first].less(pair.first_all)
        apart_second = totals[second].less(pair.second_all)
        if min(pair.gap.n, apart_first.n, apart_second.n) >= max(min_tables, 2):
            found.append(_evidence((first, second), pair, apart_first, apart_second))
    adjusted = benjamini_hochberg([e.p_value for e in found])
    tested = [
        replace(e, adjusted_p=p, flagged=p <= false_discovery_rate)
        for e, p in zip(found, adjusted, strict=True)
    ]
    tested.sort(key=lambda e: (e.adjusted_p, e.p_value, e.beneficiary, e.partner))
    return tested


def _evidence(
    bots: tuple[int, int], pair: _Together, apart_first: _Moments, apart_second: _Moments
) -> PairEvidence:
    """The statistic of one pair, pointed at the bot it favours (adjusted p-value left to 1)."""
    lift = pair.first.mean - apart_first.mean
    drop = apart_second.mean - pair.second.mean
    variance = (
        pair.gap.variance / pair.gap.n
        + apart_first.variance / apart_first.n
        + apart_second.variance / apart_second.n
    )
    statistic = lift + drop
    z = statistic / math.sqrt(variance) if variance > 0 else 0.0
    p_value = math.erfc(abs(z) / math.sqrt(2.0))
    first, second = bots
    if z >= 0:
        return PairEvidence(
            beneficiary=first,
            partner=second,
            tables=pair.gap.n,
            beneficiary_with=pair.first.raw_mean,
            beneficiary_without=apart_first.raw_mean,
            partner_with=pair.second.raw_mean,
            partner_without=apart_second.raw_mean,
            lift=lift,
            drop=drop,
            z=z,
            p_value=p_value,
            adjusted_p=1.0,
            flagged=False,
        )
    # The other way round: the second bot's lift is minus the first's drop, and so on.
    return PairEvidence(
        beneficiary=second,
        partner=first,
        tables=pair.gap.n,
        beneficiary_with=pair.second.raw_mean,
        beneficiary_without=apart_second.raw_mean,
        partner_with=pair.first.raw_mean,
        partner_without=apart_first.raw_mean,
        lift=-drop,
        drop=-lift,
        z=-z,
        p_value=p_value,
        adjusted_p=1.0,
        flagged=False,
    )
