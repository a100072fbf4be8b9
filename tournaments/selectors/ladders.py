"""Reads of the always-on ladders."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from tournaments.models import Bot, Ladder, LadderStatus, Match, MatchSeat, MatchStatus, Rating

# The home page tells how busy each ladder has been over this window.
ACTIVITY_WINDOW = timedelta(hours=1)
# The activity read walks the matches' (status, created_at) index (``match_queue_idx``) over
# the matches queued since this long before the window opened, never a ladder's whole history:
# a ladder table waits minutes for a worker, so one queued earlier that finished inside the
# window (after a ladder was paused for longer, say) is left out of the count.
ACTIVITY_QUEUED_BEFORE = timedelta(hours=1)


def ladder_list() -> QuerySet[Ladder]:
    """Ladders with their variant and counts of matches in flight and finished."""
    return Ladder.objects.select_related("variant").annotate(
        matches_in_flight=Count(
            "matches", filter=Q(matches__status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING])
        ),
        matches_finished=Count("matches", filter=Q(matches__status=MatchStatus.FINISHED)),
    )


@dataclass(frozen=True, slots=True)
class LadderActivity:
    """What a running ladder is doing: tables at play now and matches finished lately."""

    ladder: Ladder
    tables_playing: int
    finished_in_window: int
    last_finished_at: datetime | None


def ladders_activity(*, now: datetime | None = None) -> list[LadderActivity]:
    """Each running ladder by variant name with its tables playing now, its matches finished
    within ``ACTIVITY_WINDOW`` and the last one's finish, in three indexed queries."""
    now = now or timezone.now()
    ladders = list(
        Ladder.objects.filter(status=LadderStatus.RUNNING)
        .select_related("variant")
        .order_by("variant__name")
    )
    ids = [ladder.pk for ladder in ladders]
    # A duplicate group plays one rotation at a time, so each match running is a table.
    playing = dict(
        Match.objects.filter(status=MatchStatus.RUNNING, ladder_id__in=ids)
        .values("ladder_id")
        .annotate(n=Count("pk"))
        .order_by()
        .values_list("ladder_id", "n")
    )
    opens = now - ACTIVITY_WINDOW
    recent = (
        Match.objects.filter(
            status=MatchStatus.FINISHED,
            ladder_id__in=ids,
            created_at__gte=opens - ACTIVITY_QUEUED_BEFORE,
            finished_at__gte=opens,
        )
        .values("ladder_id")
        .annotate(n=Count("pk"), last=Max("finished_at"))
        .order_by()
    )
    finished: dict[int, int] = {}
    last: dict[int, datetime] = {}
    for ladder_id, n, at in recent.values_list("ladder_id", "n", "last"):
        finished[ladder_id], last[ladder_id] = n, at
    return [
        LadderActivity(
            ladder=ladder,
            tables_playing=playing.get(ladder.pk, 0),
            finished_in_window=finished.get(ladder.pk, 0),
            last_finished_at=last.get(ladder.pk),
        )
        for ladder in ladders
    ]


# The matchmaker's fair share is counted over the tables of this window.
SHARE_WINDOW = timedelta(days=1)
MAX_SEATS = 8  # the largest table any variant deals (Ladder's constraint: 3 to 8)


@dataclass(slots=True)
class FieldBot:
    """An opted-in bot as a ladder's top-up sees it: its rating in the ladder's variant (None
    before its first rated match) and its tables of the last day by seat position."""

    id: int
    owner_id: int
    status: str
    endpoint_addresses: list[str]
    mu: float | None
    sigma: float | None
    matches: int
    seats: tuple[int, ...]


def _field_sql() -> str:
    bot, rating = Bot._meta.db_table, Rating._meta.db_table
    match, seat = Match._meta.db_table, MatchSeat._meta.db_table
    by_seat = ", ".join(
        f"SUM(CASE WHEN s.seat = {i} THEN 1 ELSE 0 END) AS seat{i}" for i in range(MAX_SEATS)
    )
    seat_columns = ", ".join(f"recent.seat{i}" for i in range(MAX_SEATS))
    return f"""
        WITH recent AS (
            SELECT s.bot_id, {by_seat}
            FROM {match} m JOIN {seat} s ON s.match_id = m.id
            WHERE m.ladder_id = %s AND m.created_at >= %s AND m.status <> %s
            GROUP BY s.bot_id
        )
        SELECT b.id, b.owner_id, b.status, b.endpoint_addresses, r.mu, r.sigma, r.matches,
            {seat_columns}
        FROM {bot} b
        LEFT JOIN {rating} r ON r.bot_id = b.id AND r.variant_id = %s
        LEFT JOIN recent ON recent.bot_id = b.id
        WHERE b.ladder_opt_in
        ORDER BY b.id
    """


def ladder_field(*, ladder: Ladder, now: datetime | None = None) -> list[FieldBot]:
    """Every opted-in bot by id, with what the matchmaker weighs, in one statement.

    The last day's tables are read through the ladder's (ladder, created_at) index
    (``match_ladder_recent_idx``) and each match's seats by match, so the read grows with the
    day's tables and the opted-in bots, never with the ladder's history (bench/README.md).
    """
    since = (now or timezone.now()) - SHARE_WINDOW
    params: list[int | str | datetime] = [
        ladder.pk,
        since,
        MatchStatus.CANCELLED.value,
        ladder.variant_id,
    ]
    with connection.cursor() as cursor:
        cursor.execute(_field_sql(), params)
        rows = cursor.fetchall()
    size = ladder.table_size
    return [
        FieldBot(
            id=pk,
            owner_id=owner_id,
            status=status,
            endpoint_addresses=_addresses(addresses),
            mu=mu,
            sigma=sigma,
            matches=matches or 0,
            # Only bots with a table in the window have counts (NULL from the outer join).
            seats=() if seats[0] is None else tuple(int(n) for n in seats[:size]),
        )
        for pk, owner_id, status, addresses, mu, sigma, matches, *seats in rows
    ]


def _addresses(value: str | list[str]) -> list[str]:
    """A bot's endpoint addresses as the raw read gives them: jsonb comes back as text
    (Django's loader), as it does on SQLite."""
    if not isinstance(value, str):
        return value
    return [] if value == "[]" else json.loads(value)
