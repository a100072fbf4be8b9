"""Reads for the dashboard pages: each one a fixed number of queries, whatever the data size."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import (
    Avg,
    Count,
    F,
    Max,
    Prefetch,
    Q,
    QuerySet,
    Sum,
    Window,
)
from django.db.models.functions import RowNumber

from tournaments.maths.ratings import conservative, margin
from tournaments.models import (
    Bot,
    Match,
    MatchSeat,
    MatchStatus,
    RankInterval,
    Rating,
    RatingHistory,
    SeatFault,
    Tournament,
    TournamentStatus,
    Variant,
)
from tournaments.provisional import is_provisional
from tournaments.selectors.matches import ladder_in_play, matches_visible_to, public
from tournaments.selectors.rank_intervals import rank_intervals_of
from tournaments.selectors.tournaments import tournament_list

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class RatedBots(TypedDict):
    """The count of rated bots added to each variant by the selectors below."""

    rated_bots: int


RatedVariant: TypeAlias = "WithAnnotations[Variant, RatedBots]"

TREND_MATCHES = 10
CHART_POINTS_PER_SERIES = 300
LIVE_TOURNAMENT_STATES = [
    TournamentStatus.STARTING,
    TournamentStatus.RUNNING,
    TournamentStatus.PAUSED,
    TournamentStatus.SCHEDULED,
]


def _seats_prefetch() -> Prefetch:
    return Prefetch("seats", queryset=MatchSeat.objects.select_related("bot").order_by("seat"))


def variants_with_top_bots(*, top: int = 3) -> list[RatedVariant]:
    """Every variant with ``top_ratings``, its best bots, and ``rated_bots``, in two queries."""
    variants = list(
        Variant.objects.annotate(rated_bots=Count("ratings")).order_by("-is_preset", "name")
    )
    ranked = (
        Rating.objects.annotate(
            place=Window(
                RowNumber(),
                partition_by=[F("variant_id")],
                order_by=[F("conservative").desc(), F("bot__name").asc()],
            )
        )
        .filter(place__lte=top)
        .select_related("bot")
        .order_by("variant_id", "place")
    )
    by_variant: dict[int, list[Rating]] = defaultdict(list)
    for rating in ranked:
        by_variant[rating.variant_id].append(rating)
    for variant in variants:
        variant.top_ratings = by_variant.get(variant.pk, [])
    return variants


def live_tournaments(*, limit: int = 10) -> list[Tournament]:
    """Tournaments running, paused or scheduled, with their match counts."""
    rows = tournament_list().filter(status__in=LIVE_TOURNAMENT_STATES)
    return list(rows.order_by("-started_at", "-created_at")[:limit])


def recent_matches(*, limit: int = 10) -> list[Match]:
    """The latest finished matches with their seated bots."""
    rows = Match.objects.filter(public(), status=MatchStatus.FINISHED).select_related(
        "variant", "tournament"
    )
    return list(rows.prefetch_related(_seats_prefetch()).order_by("-finished_at", "-pk")[:limit])


def site_counts() -> dict[str, int]:
    """How many bots, finished matches and tournaments the platform holds."""
    return {
        "bots": Bot.objects.count(),
        "matches": Match.objects.filter(public(), status=MatchStatus.FINISHED).count(),
        "tournaments": Tournament.objects.count(),
    }


@dataclass
class BoardLine:
    """One leaderboard row with the figures the page shows beside the rating."""

    place: int
    rating: Rating
    provisional: bool
    exact_bid_rate: float | None
    trend: float | None
    # The bot's place in the variant's batch fit (None: the fit has not seen the bot yet).
    rank_interval: RankInterval | None

    @property
    def three_sigma(self) -> float:
        """Half the width of the range the bot's true skill very likely lies in."""
        return margin(self.rating.sigma)

    @property
    def exact_percent(self) -> float | None:
        """The exact-bid rate in percent, for display."""
        return None if self.exact_bid_rate is None else 100 * self.exact_bid_rate


def leaderboard_page_lines(
    *, variant: Variant, ratings: list[Rating], first_place: int
) -> list[BoardLine]:
    """Add exact-bid rate, trend and batch rank to one page of ratings, in three queries."""
    bot_ids = [r.bot_id for r in ratings]
    bids = (
        MatchSeat.objects.filter(
            public("match__"),
            bot_id__in=bot_ids,
            match__variant=variant,
            match__status=MatchStatus.FINISHED,
        )
        .values("bot_id")
        .annotate(exact=Sum("bids_exact"), total=Sum("bids_total"))
        .order_by()
    )
    rates = {row["bot_id"]: row["exact"] / row["total"] for row in bids if row["total"]}
    before = _ratings_before_recent(variant=variant, bot_ids=bot_ids)
    intervals = rank_intervals_of(variant_id=variant.pk, bot_ids=bot_ids)
    lines = []
    for i, rating in enumerate(ratings):
        past = before.get(rating.bot_id)
        lines.append(
            BoardLine(
                place=first_place + i,
                rating=rating,
                provisional=is_provisional(rating.matches),
                exact_bid_rate=rates.get(rating.bot_id),
                trend=None if past is None else rating.conservative - past,
                rank_interval=intervals.get(rating.bot_id),
            )
        )
    return lines


def _ratings_before_recent(*, variant: Variant, bot_ids: list[int]) -> dict[int, float]:
    """Each bot's conservative rating before its last TREND_MATCHES rated matches."""
    rows = (
        RatingHistory.objects.filter(bot_id__in=bot_ids, variant=variant)
        .annotate(
            back=Window(RowNumber(), partition_by=[F("bot_id")], order_by=[F("sequence").desc()])
        )
        .filter(back__lte=TREND_MATCHES)
        .values_list("bot_id", "back", "mu_before", "sigma_before")
    )
    oldest: dict[int, tuple[int, float]] = {}
    for bot_id, back, mu, sigma in rows:
        if back >= oldest.get(bot_id, (0, 0.0))[0]:
            oldest[bot_id] = (back, conservative(mu, sigma))
    return {bot_id: value for bot_id, (_, value) in oldest.items()}


def rating_series(*, variant: Variant, bot_ids: list[int]) -> list[RatingHistory]:
    """The latest rating updates of the given bots in one variant, oldest first."""
    rows = RatingHistory.objects.filter(bot_id__in=bot_ids, variant=variant)
    rows = rows.annotate(
        back=Window(
            RowNumber(),
            partition_by=[F("bot_id")],
            order_by=[F("sequence").desc()],
        )
    ).filter(back__lte=CHART_POINTS_PER_SERIES)
    return list(rows.only("bot_id", "variant_id", "sequence", "at", "mu_after", "sigma_after"))


def bot_profile(*, bot_id: int) -> Bot | None:
    """A bot with its owner, or None when there is no such bot."""
    return (
        Bot.objects.select_related("owner", "last_check").defer("secret").filter(pk=bot_id).first()
    )


def bot_recent_matches(*, bot: Bot, limit: int = 15) -> list[Match]:
    """The bot's latest public matches of any state, with every seat loaded; a ladder match
    once it is over (``ladder_in_play``)."""
    rows = (
        Match.objects.filter(public(), seats__bot=bot)
        .exclude(ladder_in_play())
        .select_related("variant", "tournament")
    )
    return list(rows.prefetch_related(_seats_prefetch()).order_by("-created_at", "-pk")[:limit])


def bot_play_summary(*, bot: Bot) -> dict[str, Any]:
    """Finished matches, faults and exact bids of the bot over all its public matches."""
    summary = MatchSeat.objects.filter(
        public("match__"), bot=bot, match__status=MatchStatus.FINISHED
    ).aggregate(
        matches=Count("pk"),
        faults=Sum("faults"),
        disqualified=Count("pk", filter=Q(disqualified=True)),
        exact=Sum("bids_exact"),
        deals=Sum("bids_total"),
        wins=Count("pk", filter=Q(rank=1)),
    )
    rate = summary["exact"] / summary["deals"] if summary["deals"] else None
    summary["exact_bid_rate"] = rate
    summary["exact_percent"] = None if rate is None else 100 * rate
    return summary


def bot_fault_rates(*, bot: Bot, matches: int) -> list[dict[str, Any]]:
    """Faults by kind: count, per match, matches affected, and the latency of the faulty calls."""
    rows = (
        SeatFault.objects.filter(
            public("seat__match__"), seat__bot=bot, seat__match__status=MatchStatus.FINISHED
        )
        .values("kind")
        .annotate(
            total=Sum("count"),
            affected=Count("seat", distinct=True),
            latency=Avg("latency_ms"),
            worst=Max("latency_ms"),
        )
        .order_by("-total", "kind")
    )
    return [{**row, "per_match": row["total"] / matches if matches else None} for row in rows]


def tournament_fixtures_page(*, tournament: Tournament) -> QuerySet[Match]:
    """A tournament's fixtures in playing order, seats loaded, for paging."""
    rows = Match.objects.filter(tournament=tournament).select_related("variant")
    return rows.prefetch_related(_seats_prefetch()).order_by("round", "pk")


def match_with_seats(*, match_id: int, user: User | AnonymousUser) -> Match | None:
    """A match ``user`` may see, with variant, tournament, seats, their bots and fault records,
    and its voided deals."""
    seats = (
        MatchSeat.objects.select_related("bot").prefetch_related("fault_records").order_by("seat")
    )
    rows = Match.objects.select_related("variant", "tournament").prefetch_related(
        Prefetch("seats", queryset=seats), "voided_deals"
    )
    return rows.filter(matches_visible_to(user), pk=match_id).first()


def variants_for_page() -> QuerySet[RatedVariant]:
    """Presets first, then custom variants, with their creators and rated bot counts."""
    return (
        Variant.objects.select_related("created_by")
        .annotate(rated_bots=Count("ratings"))
        .order_by("-is_preset", "name")
    )


def bots_for_page() -> QuerySet[Bot]:
    """Every bot by name with its owner and finished matches, without secret or endpoint."""
    finished = Q(seats__match__status=MatchStatus.FINISHED) & public("seats__match__")
    return (
        Bot.objects.select_related("owner")
        .defer("secret", "endpoint_url")
        .annotate(finished_matches=Count("seats", filter=finished))
        .order_by("name")
    )


def matches_for_page(
    *, bot_id: int | None = None, fault: str | None = None, variant: Variant | None = None
) -> QuerySet[Match]:
    """Public matches newest first with their seats (a ladder match once it is over:
    ``ladder_in_play``); only the bot's, only those where it had ``fault``."""
    rows = (
        Match.objects.filter(public())
        .exclude(ladder_in_play())
        .select_related("variant", "tournament")
    )
    if bot_id is not None:
        rows = rows.filter(seats__bot_id=bot_id)
        if fault:
            rows = rows.filter(seats__fault_records__kind=fault, seats__bot_id=bot_id)
    elif fault:
        rows = rows.filter(seats__fault_records__kind=fault)
    if variant is not None:
        rows = rows.filter(variant=variant)
    return rows.distinct().prefetch_related(_seats_prefetch()).order_by("-created_at", "-pk")
