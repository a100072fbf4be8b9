"""Reads of the always-on ladders."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from tournaments.models import (
    Bot,
    BotStatus,
    ConfirmedEmail,
    Ladder,
    LadderShare,
    LadderStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    email_confirmed_q,
)

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


def playable_bots() -> QuerySet[Bot]:
    """Bots the ladders may seat: active, opted in, of an account with a confirmed address
    (``ladder_slate`` reads the same rule in SQL, with the per-owner cap:
    tests/tournaments/services/test_ladder_slate.py holds the two together)."""
    return Bot.objects.filter(
        email_confirmed_q("owner__"), status=BotStatus.ACTIVE, ladder_opt_in=True
    )


# The matchmaker's fair share is counted over the tables of this window.
SHARE_WINDOW = timedelta(days=1)
# The window's start moves on in steps of this: a top-up within a step of the last move reads
# nothing of the tables leaving it (tournaments/services/shares.py).
SHARE_WINDOW_STEP = timedelta(minutes=1)


@dataclass(slots=True)
class FieldBot:
    """A free bot as a ladder's top-up sees it: its rating in the ladder's variant (None
    before its first rated match) and its tables of the window, in all and by seat position."""

    id: int
    owner_id: int
    endpoint_addresses: list[str]
    mu: float | None
    sigma: float | None
    matches: int
    tables: int  # its ladder tables of the window
    seats: tuple[int, ...]
    owner_tables: int  # its owner's open tables of the ladder (queued or playing)


def _for_each(key: str, select: str, alias: str) -> str:
    """Join ``select`` (``SELECT b.id, ... FROM bot b ... WHERE ...``) to each row by its bot
    ``key``. On PostgreSQL a LATERAL subquery fenced by OFFSET 0, so it stays a lookup by key
    for each row read: as a join, the planner, which cannot estimate the slate's tests, would
    read the whole field first. Elsewhere (SQLite, for development) a plain join."""
    if connection.vendor == "postgresql":
        return f"CROSS JOIN LATERAL ({select} AND b.id = {key} OFFSET 0) {alias}"
    return f"JOIN ({select}) {alias} ON {alias}.id = {key}"


def _slate_sql() -> str:
    bot, rating, share = Bot._meta.db_table, Rating._meta.db_table, LadderShare._meta.db_table
    match, seat = Match._meta.db_table, MatchSeat._meta.db_table
    user, confirmed = User._meta.db_table, ConfirmedEmail._meta.db_table
    # SHARE_OWED of tournaments/models/ladders.py, the expression the shares' index orders by.
    owed = "(p.tables + 1.0) / p.weight"
    may_play = f"""
        SELECT b.id, b.owner_id, b.endpoint_addresses, r.mu, r.sigma, r.matches
        FROM {bot} b
        LEFT JOIN {rating} r ON r.bot_id = b.id AND r.variant_id = %(variant)s
        WHERE b.ladder_opt_in AND b.status = %(active)s
            AND (
                SELECT c.email = u.email FROM {confirmed} c JOIN {user} u ON u.id = c.user_id
                WHERE c.user_id = b.owner_id
            )
            AND (
                SELECT COUNT(*) FROM {bot} e
                WHERE e.owner_id = b.owner_id AND e.ladder_opt_in AND e.id < b.id
            ) < %(cap)s
    """
    owner = f"SELECT b.id, b.owner_id FROM {bot} b WHERE b.id IS NOT NULL"
    return f"""
        WITH busy AS (
            SELECT s.bot_id FROM {match} m JOIN {seat} s ON s.match_id = m.id
            WHERE m.status = %(running)s
            UNION
            SELECT s.bot_id FROM {match} m JOIN {seat} s ON s.match_id = m.id
            WHERE m.ladder_id IS NOT NULL AND m.status = %(queued)s
        ),
        -- The shares not parked, in the index's order, each bot checked as it is read, until
        -- the slate is full. A bot beyond its owner's first LADDER_MAX_BOTS_PER_OWNER opted in
        -- (by id) is passed over, as is one whose account has not confirmed the address it
        -- has now.
        picked AS MATERIALIZED (
            SELECT p.bot_id, o.owner_id, o.endpoint_addresses, o.mu, o.sigma, o.matches,
                p.tables, p.seats, {owed} AS owed, p.tiebreak
            FROM {share} p
            {_for_each("p.bot_id", may_play, "o")}
            WHERE p.ladder_id = %(ladder)s AND NOT p.parked
                AND p.bot_id NOT IN (SELECT bot_id FROM busy)
            ORDER BY {owed}, p.tiebreak
            LIMIT %(size)s
        ),
        -- The owners at the ladder's open tables, and the table each sits at (a duplicate
        -- group is one table).
        open_seats AS MATERIALIZED (
            SELECT o.owner_id, CASE WHEN m.duplicate_group = '' THEN CAST(m.id AS TEXT)
                ELSE m.duplicate_group END AS tables
            FROM {match} m JOIN {seat} s ON s.match_id = m.id
            {_for_each("s.bot_id", owner, "o")}
            WHERE m.ladder_id = %(ladder)s AND m.status IN (%(queued)s, %(running)s)
        ),
        held AS (
            SELECT t.owner_id, COUNT(DISTINCT t.tables) AS tables FROM open_seats t
            WHERE t.owner_id IN (SELECT owner_id FROM picked)
            GROUP BY t.owner_id
        )
        SELECT k.bot_id, k.owner_id, k.endpoint_addresses, k.mu, k.sigma, k.matches, k.tables,
            k.seats, h.tables
        FROM picked k LEFT JOIN held h ON h.owner_id = k.owner_id
        ORDER BY k.owed, k.tiebreak
    """


def ladder_slate(*, ladder: Ladder, size: int) -> list[FieldBot]:
    """The ``size`` bots the ladder may seat now that are furthest behind their share, in that
    order (ties in the order each share last drew), with what the matchmaker weighs and each
    owner's open tables of the ladder, in one statement: ``slate`` of
    tournaments/formats/matchmaking.py over the free bots of ``playable_bots`` (active, opted
    in, of a confirmed account, each owner's
    first ``LADDER_MAX_BOTS_PER_OWNER`` opted in by id), not at an open ladder table and not
    playing any match.

    A bot's tables of the window and its weight are its ``LadderShare`` row
    (tournaments/services/shares.py), read in the order of their index: about ``size`` rows,
    plus those of bots the ladders may not seat now, whatever the field's size and the
    ladder's history and pace (bench/README.md).
    """
    values: dict[str, int | str] = {
        "ladder": ladder.pk,
        "running": MatchStatus.RUNNING.value,
        "queued": MatchStatus.QUEUED.value,
        "variant": ladder.variant_id,
        "cap": settings.LADDER_MAX_BOTS_PER_OWNER,
        "active": BotStatus.ACTIVE.value,
        "size": size,
    }
    with connection.cursor() as cursor:
        cursor.execute(_slate_sql(), values)
        rows = cursor.fetchall()
    table = ladder.table_size
    return [
        FieldBot(
            id=pk,
            owner_id=owner_id,
            endpoint_addresses=_addresses(addresses),
            mu=mu,
            sigma=sigma,
            matches=matches or 0,
            tables=tables,
            seats=_seat_counts(seats, table),
            owner_tables=owner_tables or 0,
        )
        for pk, owner_id, addresses, mu, sigma, matches, tables, seats, owner_tables in rows
    ]


def _seat_counts(value: str | list[int] | None, table: int) -> tuple[int, ...]:
    """A share's tables by seat position, for the ladder's seats (none before its first)."""
    if value is None:
        return ()
    counts = json.loads(value) if isinstance(value, str) else value
    return tuple(int(n) for n in counts[:table]) + (0,) * max(0, table - len(counts))


def _addresses(value: str | list[str]) -> list[str]:
    """A bot's endpoint addresses as the raw read gives them: jsonb comes back as text
    (Django's loader), as it does on SQLite."""
    if not isinstance(value, str):
        return value
    return [] if value == "[]" else json.loads(value)
