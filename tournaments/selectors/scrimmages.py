"""Reading scrimmages: an owner's own, with their matches; and what other owners' scrimmages
an owner's bot played, as a count only (whose they were and how they went stay the asker's)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, Max, Prefetch, Q, QuerySet

from tournaments.models import (
    Bot,
    BotStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Scrimmage,
    ScrimmageOpponent,
    ScrimmageStatus,
)
from tournaments.selectors.matches import scrimmage_match_list

# A match that will not be played again unless staff retry it.
ENDED = (MatchStatus.FINISHED, MatchStatus.FAILED, MatchStatus.CANCELLED)


def _with_progress(rows: QuerySet[Scrimmage]) -> QuerySet[Scrimmage]:
    return rows.annotate(
        ended=Count("matches", filter=Q(matches__status__in=ENDED)),
        started=Count("matches", filter=~Q(matches__status=MatchStatus.QUEUED)),
        finished_at=Max("matches__finished_at"),
    )


def scrimmage_status(
    *, match_count: int, ended: int, started: int, cancelled: bool = False
) -> ScrimmageStatus:
    """Queued until a match starts, running until every match has ended, then finished; or
    cancelled, by its owner or because one of its bots could no longer be played."""
    if cancelled:
        return ScrimmageStatus.CANCELLED
    if ended >= match_count:
        return ScrimmageStatus.FINISHED
    return ScrimmageStatus.RUNNING if started or ended else ScrimmageStatus.QUEUED


def _opponents_prefetch() -> Prefetch:
    entries = ScrimmageOpponent.objects.select_related("bot").order_by("position")
    return Prefetch("opponent_entries", queryset=entries)


def scrimmages_of(*, user: User | AnonymousUser) -> QuerySet[Scrimmage]:
    """The scrimmages ``user`` asked for, newest first, with their bots and progress counts
    (``ended``, ``started``, ``finished_at``)."""
    rows = Scrimmage.objects.filter(owner_id=user.pk).select_related("bot", "variant")
    return _with_progress(rows.prefetch_related(_opponents_prefetch())).order_by(
        "-created_at", "-pk"
    )


def scrimmage_visible(*, user: User | AnonymousUser, scrimmage_id: int) -> Scrimmage | None:
    """A scrimmage its owner or staff asked for, or None for anyone else (not even confirmed
    to exist)."""
    rows = Scrimmage.objects.select_related("bot", "variant", "owner")
    if isinstance(user, AnonymousUser):
        return None
    if not user.is_staff:
        rows = rows.filter(owner_id=user.pk)
    return (
        _with_progress(rows.prefetch_related(_opponents_prefetch())).filter(pk=scrimmage_id).first()
    )


def scrimmage_matches(*, scrimmage: Scrimmage) -> list[Match]:
    """The scrimmage's matches in playing order, each with its seats and their bots."""
    return list(scrimmage_match_list(scrimmage_id=scrimmage.pk))


@dataclass(frozen=True)
class ScrimmagesFaced:
    """How many matches of other owners' scrimmages a bot was seated in, and how many ended."""

    matches: int
    ended: int


def scrimmages_faced(*, bot: Bot) -> ScrimmagesFaced:
    """The bot's matches in scrimmages other owners asked for: counts only, for its owner."""
    rows = MatchSeat.objects.filter(bot=bot, match__scrimmage__isnull=False).exclude(
        match__scrimmage__owner_id=bot.owner_id
    )
    counts = rows.aggregate(
        matches=Count("pk"), ended=Count("pk", filter=Q(match__status__in=ENDED))
    )
    return ScrimmagesFaced(matches=counts["matches"], ended=counts["ended"])


def practice_opponents(*, bot: Bot) -> list[Bot]:
    """The bots ``bot`` may be given as opponents, by name: its owner's other active bots, then
    other owners' active bots whose owners accept scrimmages (reference players aside)."""
    rows = (
        Bot.objects.filter(status=BotStatus.ACTIVE, reference_player="")
        .filter(Q(owner_id=bot.owner_id) | Q(accepts_scrimmages=True))
        .exclude(pk=bot.pk)
        .select_related("owner")
        .only("pk", "name", "owner_id", "owner__username")
    )
    return sorted(rows, key=lambda b: (b.owner_id != bot.owner_id, b.name.lower()))
