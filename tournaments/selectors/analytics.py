"""A bot's analytics in one variant, from public data only: what explains its rating.

Scrimmage matches are private (tournaments/selectors/matches.py, ``public``): they are never
tallied (tournaments/services/analytics.py) and every read of matches here leaves them out.

Exact bids and points per deal by hand size and by place relative to the dealer (summed from
the ``SeatTally`` rows written with each recorded match), results against each opponent,
faults over time, and the rating with its uncertainty after each rated match. Every read is
a fixed number of indexed queries, whatever the number of matches; the whole is cached per
bot and variant (tournaments/cache_keys.py), dropped when a match of the bot is recorded or
rated (tournaments/services/analytics.py) and otherwise kept BOT_ANALYTICS_CACHE_SECONDS.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import (
    Count,
    F,
    IntegerField,
    Max,
    Min,
    Q,
    QuerySet,
    Sum,
    Window,
)
from django.db.models.functions import Mod, RowNumber, Trunc

from tournaments.cache_keys import bot_analytics_key
from tournaments.maths.ratings import conservative
from tournaments.models import MatchSeat, MatchStatus, RatingHistory, SeatTally
from tournaments.selectors.matches import public

log = logging.getLogger(__name__)

# The rating drawn after at most this many matches, evenly spread (and always the latest).
RATING_POINTS = 500
OPPONENTS_SHOWN = 20
# Faults are counted by the longest of these periods that still splits the bot's time in a
# variant into at most FAULT_PERIODS_SHOWN parts; the latest FAULT_PERIODS_SHOWN are kept.
FAULT_PERIODS = (
    ("minute", 60),
    ("hour", 3600),
    ("day", 86_400),
    ("week", 7 * 86_400),
    ("month", 31 * 86_400),
)
FAULT_PERIODS_SHOWN = 12
# How the page names a period by its start (UTC, as the site shows every time).
PERIOD_LABELS = {
    "minute": "%Y-%m-%d %H:%M",
    "hour": "%Y-%m-%d %H:00",
    "day": "%Y-%m-%d",
    "week": "week of %Y-%m-%d",
    "month": "%Y-%m",
}


@dataclass(frozen=True)
class DealLine:
    """Deals of one hand size (or from one place at the table): how many, exact, points."""

    key: int
    deals: int
    exact: int
    points: int
    # For a place at the table: how many sat at it (the place means little without it).
    players: int | None = None

    @property
    def exact_rate(self) -> float:
        """Share of these deals whose bid was made exactly."""
        return self.exact / self.deals

    @property
    def exact_percent(self) -> float:
        """The exact-bid rate in percent, for display."""
        return 100 * self.exact_rate

    @property
    def points_per_deal(self) -> float:
        """Mean points one of these deals scored."""
        return self.points / self.deals

    @property
    def place(self) -> str:
        """The place at the table in words: the dealer bids last, the seat after him first."""
        if self.key == 0:
            return "dealer (bids last)"
        return "1st to bid" if self.key == 1 else f"{_ordinal(self.key)} to bid"


@dataclass(frozen=True)
class OpponentLine:
    """Finished tables shared with one opponent, and how often the bot scored above, level,
    below it."""

    bot_id: int
    name: str
    tables: int
    ahead: int
    level: int
    behind: int


@dataclass(frozen=True)
class FaultPeriod:
    """The bot's finished matches that ended in one period, with their faults."""

    start: datetime
    label: str
    matches: int
    faults: int
    disqualified: int

    @property
    def per_match(self) -> float:
        return self.faults / self.matches


@dataclass(frozen=True)
class RatingPoint:
    """The bot's rating after its ``match``-th rated match of the variant."""

    match: int
    at: datetime
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        return conservative(self.mu, self.sigma)


@dataclass(frozen=True)
class BotAnalytics:
    """Everything the bot page's analytics and ``/api/bots/<id>/analytics/`` show."""

    bot_id: int
    variant_id: int
    variant: str
    matches: int
    deals: int
    exact: int
    points: int
    by_hand_size: list[DealLine]
    by_place: list[DealLine]
    opponents: list[OpponentLine]
    fault_period: str
    faults: list[FaultPeriod]
    rated_matches: int
    rating: list[RatingPoint]

    @property
    def exact_rate(self) -> float | None:
        return self.exact / self.deals if self.deals else None

    @property
    def exact_percent(self) -> float | None:
        return None if self.exact_rate is None else 100 * self.exact_rate

    @property
    def points_per_deal(self) -> float | None:
        return self.points / self.deals if self.deals else None


@dataclass(frozen=True)
class PlayedVariant:
    """A variant the bot has finished matches in."""

    variant_id: int
    name: str
    matches: int


def _ordinal(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n if n < 20 else n % 10, 'th') }"


def _finished_seats(bot_id: int, variant_id: int) -> QuerySet[MatchSeat]:
    return MatchSeat.objects.filter(
        public("match__"),
        bot_id=bot_id,
        match__variant_id=variant_id,
        match__status=MatchStatus.FINISHED,
    )


def played_variants(*, bot_id: int) -> list[PlayedVariant]:
    """The variants the bot has finished matches in, most matches first, in one query."""
    rows = (
        MatchSeat.objects.filter(
            public("match__"), bot_id=bot_id, match__status=MatchStatus.FINISHED
        )
        .values("match__variant_id", "match__variant__name")
        .annotate(matches=Count("pk"))
        .order_by("-matches", "match__variant__name")
    )
    return [
        PlayedVariant(r["match__variant_id"], r["match__variant__name"], r["matches"]) for r in rows
    ]


def bot_analytics(*, bot_id: int, variant_id: int, variant_name: str) -> BotAnalytics:
    """The bot's analytics in the variant, from the cache or read in a fixed number of queries."""
    key = bot_analytics_key(bot_id, variant_id)
    timeout = settings.BOT_ANALYTICS_CACHE_SECONDS
    if timeout:
        try:
            found = cache.get(key)
        except Exception:  # any backend's failure: read from the database instead
            log.warning("cache unavailable: reading bot analytics from the database")
            found = None
        if isinstance(found, BotAnalytics):
            return found
    analytics = read_bot_analytics(bot_id=bot_id, variant_id=variant_id, variant_name=variant_name)
    if timeout:
        try:
            cache.set(key, analytics, timeout=timeout)
        except Exception:  # any backend's failure: answered, only not kept
            log.warning("cache unavailable: bot analytics not kept")
    return analytics


def read_bot_analytics(*, bot_id: int, variant_id: int, variant_name: str) -> BotAnalytics:
    """The bot's analytics in the variant, read from the database (no cache)."""
    # One pass over the bot's tallies, grouped finely; both tables are summed from its rows.
    groups = list(
        SeatTally.objects.filter(bot_id=bot_id, variant_id=variant_id)
        .values("hand_size", "players", "after_dealer")
        .annotate(deals=Sum("deals"), exact=Sum("exact"), points=Sum("points"))
        .order_by()
    )
    by_hand = _summed(groups, lambda r: (r["hand_size"],))
    # Bidding order: first to bid (1) to the dealer (0), who bids last.
    by_place = sorted(
        _summed(groups, lambda r: (r["after_dealer"], r["players"])),
        key=lambda line: (line.players or 0, line.key or line.players or 0),
    )
    period, faults = _faults_over_time(bot_id, variant_id)
    rated, rating = _rating_over_matches(bot_id, variant_id)
    return BotAnalytics(
        bot_id=bot_id,
        variant_id=variant_id,
        variant=variant_name,
        matches=_finished_seats(bot_id, variant_id).count(),
        deals=sum(line.deals for line in by_hand),
        exact=sum(line.exact for line in by_hand),
        points=sum(line.points for line in by_hand),
        by_hand_size=by_hand,
        by_place=by_place,
        opponents=_opponents(bot_id, variant_id),
        fault_period=period,
        faults=faults,
        rated_matches=rated,
        rating=rating,
    )


def _summed(
    groups: Sequence[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], tuple[int, ...]]
) -> list[DealLine]:
    """Tally groups summed by ``key`` (a hand size; or a place and the table's size), in order."""
    sums: dict[tuple[int, ...], list[int]] = {}
    for row in groups:
        line = sums.setdefault(key(row), [0, 0, 0])
        line[0] += row["deals"]
        line[1] += row["exact"]
        line[2] += row["points"]
    return [
        DealLine(
            key=k[0],
            players=k[1] if len(k) > 1 else None,
            deals=deals,
            exact=exact,
            points=points,
        )
        for k, (deals, exact, points) in sorted(sums.items())
    ]


def _opponents(bot_id: int, variant_id: int) -> list[OpponentLine]:
    """The bots it shared most finished tables with, and how it scored against each."""
    # Each opponent's seat joined to the bot's own seat at the same table ("match__seats"),
    # one join that the filter and the counts share: "score" is theirs, the joined one the bot's.
    mine = F("match__seats__score")
    rows = (
        MatchSeat.objects.filter(
            public("match__"),
            match__seats__bot_id=bot_id,
            match__variant_id=variant_id,
            match__status=MatchStatus.FINISHED,
        )
        .exclude(bot_id=bot_id)
        .values("bot_id", "bot__name")
        .annotate(
            tables=Count("pk"),
            ahead=Count("pk", filter=Q(score__lt=mine)),
            level=Count("pk", filter=Q(score=mine)),
            behind=Count("pk", filter=Q(score__gt=mine)),
        )
        .order_by("-tables", "bot__name")[:OPPONENTS_SHOWN]
    )
    return [
        OpponentLine(
            bot_id=r["bot_id"],
            name=r["bot__name"],
            tables=r["tables"],
            ahead=r["ahead"],
            level=r["level"],
            behind=r["behind"],
        )
        for r in rows
    ]


def fault_period_for(span_s: float) -> str:
    """The period faults are counted by for a bot whose matches span ``span_s`` seconds."""
    for name, seconds in FAULT_PERIODS:
        if span_s < FAULT_PERIODS_SHOWN * seconds:
            return name
    return FAULT_PERIODS[-1][0]


def _faults_over_time(bot_id: int, variant_id: int) -> tuple[str, list[FaultPeriod]]:
    seats = _finished_seats(bot_id, variant_id)
    span = seats.aggregate(first=Min("match__finished_at"), last=Max("match__finished_at"))
    if span["first"] is None:
        return FAULT_PERIODS[0][0], []
    period = fault_period_for((span["last"] - span["first"]).total_seconds())
    rows = (
        seats.annotate(period=Trunc("match__finished_at", period))
        .values("period")
        .annotate(
            matches=Count("pk"),
            faults=Sum("faults"),
            disqualified=Count("pk", filter=Q(disqualified=True)),
        )
        .order_by("-period")[:FAULT_PERIODS_SHOWN]
    )
    return period, [
        FaultPeriod(
            start=r["period"],
            label=r["period"].strftime(PERIOD_LABELS[period]),
            matches=r["matches"],
            faults=r["faults"],
            disqualified=r["disqualified"],
        )
        for r in reversed(rows)
    ]


def _rating_over_matches(bot_id: int, variant_id: int) -> tuple[int, list[RatingPoint]]:
    """How many rated matches, and the rating before the first (match 0) and after each (at
    most RATING_POINTS of them, evenly spread, the first and the latest always among them).

    A new version's update (sigma raised, no match) keeps the number of the match before it.
    """
    history = RatingHistory.objects.filter(bot_id=bot_id, variant_id=variant_id)
    total = history.count()
    if not total:
        return 0, []
    step = math.ceil(total / RATING_POINTS)
    rows = history.annotate(
        row=Window(RowNumber(), order_by=[F("sequence").asc()]),
        number=Window(Count("match"), order_by=[F("sequence").asc()]),
    )
    if step > 1:
        rows = rows.annotate(offset=Mod(F("row") - 1, step, output_field=IntegerField())).filter(
            Q(offset=0) | Q(row=total)
        )
    found = list(
        rows.values(
            "number", "at", "mu_before", "sigma_before", "mu_after", "sigma_after"
        ).order_by("sequence")
    )
    first = found[0]
    start = RatingPoint(match=0, at=first["at"], mu=first["mu_before"], sigma=first["sigma_before"])
    points = [start] + [
        RatingPoint(match=r["number"], at=r["at"], mu=r["mu_after"], sigma=r["sigma_after"])
        for r in found
    ]
    return points[-1].match, points
