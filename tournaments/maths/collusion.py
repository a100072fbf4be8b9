"""Collusion read from running totals of the tables bots shared: pairs, and bots lifted by many.

Bots of different accounts can still work together at a table: one (a partner) bids and plays
to let another (the beneficiary) make its bids, and gives up its own result for it. That leaves
a trace in the results, which this module tests for every pair of bots and for every bot.

A bot's result at a table is measured against the *other* bots there only, never against the
partner under test (beating the partner is what a sacrifice gives away): for each other bot, 1
if it finished above it, a half for an equal place, 0 below, less the chance the ratings before
the table gave it of finishing above that bot (``rating_chance``). The residuals are averaged
over the other bots at the table. A duplicate group's rotations share their deals, so they are
one unit: the residuals are averaged over them.

Everything a test needs is a running sum, added to as each unit is rated (``Totals.add``) and
never re-read from the matches: per bot, the moments of its residual against everyone; per pair,
those of both bots at the units they shared. A scan reads the sums alone, so its cost follows
the number of pairs that met, not the length of the history.

The pair test, for a pair (A, B) with ``tables`` shared units of three or more bots:

- A's lift: A's mean residual at the units with B less its mean at its units without B;
- B's drop: B's mean residual at its units without A less its mean at the units with A;
- the statistic: (lift + drop) over its standard error, from the variance of A's residual less
  B's at the shared units over their number, plus those of A's and B's residuals apart over
  theirs. Close to standard normal without collusion; two-sided, the beneficiary being the bot
  it favours; p-values adjusted by Benjamini-Hochberg over the pairs tested.

A ring spreads its help over many partners, each sharing too few tables to pass the pair test.
The bot test looks from the beneficiary: for each bot A, each table-mate B it shared at least
``min_repeat`` units with gives B's drop next to A as a z (B's own results, so the table-mates'
z's are independent of each other and of A), and the sum of the positive z's squared is
compared with its distribution without collusion (each term 0 or a chi-square of one degree,
half and half). A few table-mates giving up a lot, or many giving up a little, both stand out;
p-values are adjusted by Benjamini-Hochberg over the bots tested.

Pure: finishing orders and ratings in, evidence out; no Django, so a bench can use it as it is.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from itertools import combinations
from typing import TypeVar

from tournaments.maths.intervals import Finish

# P(x finishes above y), given the two bots' ids.
Chance = Callable[[int, int], float]


def rating_chance(mu_x: float, sigma_x: float, mu_y: float, sigma_y: float, beta: float) -> float:
    """The chance TrueSkill ratings give the first bot of finishing above the second."""
    spread = math.sqrt(2.0 * beta * beta + sigma_x * sigma_x + sigma_y * sigma_y)
    return 0.5 * math.erfc(-(mu_x - mu_y) / (spread * math.sqrt(2.0)))


@dataclass(slots=True)
class Moments:
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

    def less(self, other: Moments) -> Moments:
        return Moments(
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
class PairSums:
    """What the units a pair (first below second by id) shared add up to."""

    gap: Moments = field(default_factory=Moments)  # first's residual less second's, 3+ bots
    first: Moments = field(default_factory=Moments)  # first's residual leaving out second
    second: Moments = field(default_factory=Moments)
    # The two bots' results against everyone at every shared unit (any size), to take away
    # from their totals for their units apart.
    first_all: Moments = field(default_factory=Moments)
    second_all: Moments = field(default_factory=Moments)

    def to_list(self) -> list[float]:
        """The sums as a flat list (what is stored), in ``from_list``'s order."""
        return [float(getattr(m, f.name)) for m in self._parts() for f in fields(Moments)]

    @classmethod
    def from_list(cls, values: Sequence[float]) -> PairSums:
        sums = cls()
        for i, part in enumerate(sums._parts()):
            n, total, squares, raw = values[4 * i : 4 * i + 4]
            part.n, part.total, part.squares, part.raw = int(n), total, squares, raw
        return sums

    def _parts(self) -> tuple[Moments, ...]:
        return (self.gap, self.first, self.second, self.first_all, self.second_all)


@dataclass(slots=True)
class Totals:
    """Running sums of one variant: per bot and per pair (first id below second)."""

    bots: dict[int, Moments] = field(default_factory=lambda: defaultdict(Moments))
    pairs: dict[tuple[int, int], PairSums] = field(default_factory=lambda: defaultdict(PairSums))

    def add(self, finishes: Sequence[Finish], chance: Chance) -> None:
        """Add one unit (a table, or a duplicate group's rotations) to the sums."""
        unit = _unit(finishes, chance)
        if len(unit.bots) < 2:
            return
        full = {bot: unit.against(bot, None) for bot in unit.bots}
        for bot, (res, raw) in full.items():
            self.bots[bot].add(res, raw)
        for first, second in combinations(unit.bots, 2):
            pair = self.pairs[first, second]
            pair.first_all.add(*full[first])
            pair.second_all.add(*full[second])
            if len(unit.bots) < 3:
                continue
            a, a_raw = unit.against(first, second)
            b, b_raw = unit.against(second, first)
            pair.gap.add(a - b, 0.0)
            pair.first.add(a, a_raw)
            pair.second.add(b, b_raw)


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


def _unit(finishes: Sequence[Finish], chance: Chance) -> _Unit:
    """Average each bot's outcome against each other bot over the unit's finishes."""
    residual: dict[tuple[int, int], float] = defaultdict(float)
    raw: dict[tuple[int, int], float] = defaultdict(float)
    seen: dict[tuple[int, int], int] = defaultdict(int)
    for finish in finishes:
        place = dict(zip(finish.bots, finish.places, strict=True))
        for bot, other in combinations(sorted(place), 2):
            for x, y in ((bot, other), (other, bot)):
                outcome = 1.0 if place[x] < place[y] else 0.5 if place[x] == place[y] else 0.0
                residual[x, y] += outcome - chance(x, y)
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


@dataclass(frozen=True, slots=True)
class PairEvidence:
    """The test of one pair, with the beneficiary the statistic points to.

    Results are shares of the other bots at a table (never the pair) a bot finished above
    (a half for an equal place), raw as played; ``lift`` and ``drop`` are of the same shares
    less what the ratings before each table predicted, so a change of opponents does not move
    them.
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
    adjusted_p: float = 1.0
    flagged: bool = False


@dataclass(frozen=True, slots=True)
class BotEvidence:
    """The test of one bot against all the table-mates it shared ``min_repeat`` units or more
    with: ``partners`` of them gave up results next to it (a positive z), over ``tables`` units
    shared; ``statistic`` is the sum of their z's squared."""

    bot: int
    table_mates: int
    partners: int
    tables: int
    statistic: float
    p_value: float
    adjusted_p: float = 1.0
    flagged: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    """A scan's tests: pairs and bots, each flagged first, then strongest evidence first."""

    pairs: list[PairEvidence]
    bots: list[BotEvidence]


def scan(
    totals: Totals,
    *,
    min_tables: int,
    min_repeat: int,
    false_discovery_rate: float,
) -> Verdict:
    """Test every pair that shared at least ``min_tables`` units of three or more bots and has
    as many apart each, and every bot with a table-mate it shared ``min_repeat`` units with;
    flag those whose adjusted p-value is at most ``false_discovery_rate``."""
    pairs: list[PairEvidence] = []
    drops: dict[int, list[tuple[int, int, float]]] = defaultdict(list)
    for (first, second), pair in totals.pairs.items():
        if pair.gap.n < 1:
            continue
        apart_first = totals.bots[first].less(pair.first_all)
        apart_second = totals.bots[second].less(pair.second_all)
        if min(pair.gap.n, apart_first.n, apart_second.n) >= max(min_tables, 2):
            pairs.append(_pair_evidence((first, second), pair, apart_first, apart_second))
        if pair.gap.n >= min_repeat:
            drops[first].append((second, pair.gap.n, _drop_z(pair.second, apart_second)))
            drops[second].append((first, pair.gap.n, _drop_z(pair.first, apart_first)))
    tested = _one_role_each(
        _adjust(pairs, false_discovery_rate, lambda e: (e.beneficiary, e.partner))
    )
    lifted = {e.beneficiary for e in tested if e.flagged}
    return Verdict(pairs=tested, bots=_test_bots(drops, false_discovery_rate, lifted))


def _test_bots(
    drops: Mapping[int, list[tuple[int, int, float]]], rate: float, lifted: set[int]
) -> list[BotEvidence]:
    """Every bot's test, flagged bots first, strongest evidence first.

    A lifted bot seems to drop next to any bot that takes a seat its partners could have had,
    so the bots are taken one at a time: the strongest flagged bot is kept, and the rest tested
    again without it (nor any beneficiary of a flagged pair) among their table-mates, until a
    pass flags nothing.
    """
    flagged: list[BotEvidence] = []
    left = set(lifted)
    while True:
        found = [
            _bot_evidence(bot, [(n, z) for mate, n, z in mates if mate not in left])
            for bot, mates in drops.items()
            if bot not in {e.bot for e in flagged}
        ]
        tested = _adjust([e for e in found if e.table_mates], rate, lambda e: (e.bot,))
        if not tested or not tested[0].flagged:
            return flagged + tested
        flagged.append(tested[0])
        left.add(tested[0].bot)


def _one_role_each(pairs: list[PairEvidence]) -> list[PairEvidence]:
    """Unflag a pair whose beneficiary a stronger flag names a partner, or whose partner one
    names a beneficiary; flagged pairs first again.

    A pair's sacrifice moves its neighbours' results a little too: the others at its tables
    move up a place past the partner, and a bot at the beneficiary's table leaves one seat
    fewer for a partner, so its results look lowered next to that bot. Such a trace points
    the roles the wrong way round; a ring (one beneficiary, many partners) keeps them.
    """
    beneficiaries: set[int] = set()
    partners: set[int] = set()
    kept: list[PairEvidence] = []
    for e in pairs:
        if e.flagged and (e.beneficiary in partners or e.partner in beneficiaries):
            e = replace(e, flagged=False)
        if e.flagged:
            beneficiaries.add(e.beneficiary)
            partners.add(e.partner)
        kept.append(e)
    kept.sort(key=lambda e: not e.flagged)
    return kept


_E = TypeVar("_E", PairEvidence, BotEvidence)


def _adjust(found: list[_E], rate: float, key: Callable[[_E], tuple[int, ...]]) -> list[_E]:
    """The evidence with Benjamini-Hochberg adjusted p-values and flags, best first."""
    adjusted = benjamini_hochberg([e.p_value for e in found])
    tested = [
        replace(e, adjusted_p=p, flagged=p <= rate) for e, p in zip(found, adjusted, strict=True)
    ]
    tested.sort(key=lambda e: (e.adjusted_p, e.p_value, key(e)))
    return tested


def _drop_z(with_bot: Moments, apart: Moments) -> float:
    """How far a table-mate's residual next to a bot falls below its own results elsewhere,
    in standard errors (its spread apart serves for both, as a few shared units give none)."""
    if apart.n < 2:
        return 0.0
    variance = apart.variance * (1.0 / with_bot.n + 1.0 / apart.n)
    if variance <= 0:
        return 0.0
    return (apart.mean - with_bot.mean) / math.sqrt(variance)


def _bot_evidence(bot: int, drops: Sequence[tuple[int, float]]) -> BotEvidence:
    """The sum of the table-mates' positive drop z's squared, and its chance without collusion:
    each term is 0 or a chi-square of one degree with even odds, so given m positive terms the
    sum is a chi-square of m degrees, m binomial over the table-mates."""
    k = len(drops)
    statistic = sum(z * z for _, z in drops if z > 0)
    p_value = 0.0
    tails = chi_square_tails(statistic, k)
    for m in range(k + 1):
        log_weight = math.lgamma(k + 1) - math.lgamma(m + 1) - math.lgamma(k - m + 1)
        p_value += math.exp(log_weight - k * math.log(2.0)) * tails[m]
    return BotEvidence(
        bot=bot,
        table_mates=k,
        partners=sum(1 for _, z in drops if z > 0),
        tables=sum(n for n, _ in drops),
        statistic=statistic,
        p_value=min(1.0, p_value),
    )


def chi_square_tails(x: float, most: int) -> list[float]:
    """P(a chi-square of m degrees is at least ``x``) for m from 0 to ``most``, by the
    recurrence Q(m + 2) = Q(m) + (x/2)^(m/2) e^(-x/2) / Gamma(m/2 + 1)."""
    half = max(x, 0.0) / 2.0
    tails = [1.0 if x <= 0 else 0.0, math.erfc(math.sqrt(half)), math.exp(-half)]
    for m in range(1, most - 1):
        step = -half - math.lgamma(m / 2.0 + 1.0)
        if half > 0:
            step += (m / 2.0) * math.log(half)
        tails.append(min(1.0, tails[m] + math.exp(step)))
    return tails[: most + 1]


def _pair_evidence(
    bots: tuple[int, int], pair: PairSums, apart_first: Moments, apart_second: Moments
) -> PairEvidence:
    """The statistic of one pair, pointed at the bot it favours (adjusted p-value left to 1)."""
    lift = pair.first.mean - apart_first.mean
    drop = apart_second.mean - pair.second.mean
    variance = (
        pair.gap.variance / pair.gap.n
        + apart_first.variance / apart_first.n
        + apart_second.variance / apart_second.n
    )
    z = (lift + drop) / math.sqrt(variance) if variance > 0 else 0.0
    first, second = bots
    sides = [
        (first, pair.first, apart_first, lift),
        (second, pair.second, apart_second, drop),
    ]
    if z < 0:  # the other way round: the second bot's lift is minus the first's drop
        sides.reverse()
        lift, drop, z = -drop, -lift, -z
    (beneficiary, b_with, b_apart, _), (partner, p_with, p_apart, _) = sides
    return PairEvidence(
        beneficiary=beneficiary,
        partner=partner,
        tables=pair.gap.n,
        beneficiary_with=b_with.raw_mean,
        beneficiary_without=b_apart.raw_mean,
        partner_with=p_with.raw_mean,
        partner_without=p_apart.raw_mean,
        lift=lift,
        drop=drop,
        z=z,
        p_value=math.erfc(abs(z) / math.sqrt(2.0)),
    )


def totals_of(units: Iterable[Sequence[Finish]], chance: Chance) -> Totals:
    """The running sums of ``units`` in order (what recording them one by one adds up to)."""
    totals = Totals()
    for unit in units:
        totals.add(unit, chance)
    return totals
