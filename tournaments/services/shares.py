"""A ladder's shares: each bot's tables in the matchmaker's window (``SHARE_WINDOW``), kept as
tables are made, cancelled and leave the window, so a top-up reads one row a bot
(``ladder_slate`` in tournaments/selectors/ladders.py) however long the ladder's history and
however many tables it makes a day.

A ladder's shares count its tables not cancelled that were made at or after
``Ladder.shares_since``; each top-up first moves that time on to the window's start and takes
out the tables made in between, reading only those. Every change runs inside a top-up, which
holds every running ladder's row (tournaments/services/ladders.py), so no two change one
ladder's shares at once. ``shares_rebuild`` counts them afresh from the window's tables: what
a ladder does the first time, and what the kept counts always equal
(tests/tournaments/services/test_ladder_shares.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db.models import QuerySet

from tournaments.models import Ladder, LadderShare, Match, MatchSeat, MatchStatus
from tournaments.selectors.ladders import SHARE_WINDOW
from tournaments.services.ratings import update_rows

SeatCounts = dict[int, list[int]]  # bot -> tables by seat position


def _count(seats: Iterable[tuple[int, int]]) -> SeatCounts:
    counts: SeatCounts = {}
    for bot_id, seat in seats:
        row = counts.setdefault(bot_id, [])
        row.extend([0] * (seat + 1 - len(row)))
        row[seat] += 1
    return counts


def _counted(matches: QuerySet[Match]) -> SeatCounts:
    """The seats of these matches, by bot and position (cancelled ones left out)."""
    rows = MatchSeat.objects.filter(
        match__in=matches.exclude(status=MatchStatus.CANCELLED)
    ).values_list("bot_id", "seat")
    return _count(rows)


def _apply(ladder: Ladder, counts: SeatCounts, sign: int) -> None:
    """Add (``sign`` 1) or take out (-1) these tables from the ladder's shares."""
    if not counts:
        return
    existing = {
        share.bot_id: share for share in LadderShare.objects.filter(ladder=ladder, bot__in=counts)
    }
    changed, new = [], []
    for bot_id, by_seat in counts.items():
        share = existing.get(bot_id)
        if share is None:
            share = LadderShare(ladder=ladder, bot_id=bot_id, tables=0, seats=[])
            new.append(share)
        else:
            changed.append(share)
        seats = list(share.seats) + [0] * max(0, len(by_seat) - len(share.seats))
        for position, n in enumerate(by_seat):
            seats[position] += sign * n
        share.seats = seats
        share.tables += sign * sum(by_seat)
        if share.tables < 0 or min(seats) < 0:
            raise ValueError(f"the share of bot {bot_id} on ladder {ladder.pk} went below 0")
    LadderShare.objects.bulk_create(new)
    update_rows(LadderShare, changed, ["tables", "seats"])


def shares_rebuild(ladder: Ladder, *, now: datetime) -> None:
    """Count the ladder's shares afresh from its tables made within the window before ``now``."""
    since = now - SHARE_WINDOW
    LadderShare.objects.filter(ladder=ladder).delete()
    _apply(ladder, _counted(Match.objects.filter(ladder=ladder, created_at__gte=since)), 1)
    ladder.shares_since = since
    ladder.save(update_fields=["shares_since", "updated_at"])


def shares_move_window(ladder: Ladder, *, now: datetime) -> None:
    """Take out the tables that left the window since the last top-up (or count them all, the
    first time)."""
    since = now - SHARE_WINDOW
    if ladder.shares_since is None:
        shares_rebuild(ladder, now=now)
        return
    if ladder.shares_since >= since:
        return
    left = Match.objects.filter(
        ladder=ladder, created_at__gte=ladder.shares_since, created_at__lt=since
    )
    _apply(ladder, _counted(left), -1)
    ladder.shares_since = since
    ladder.save(update_fields=["shares_since", "updated_at"])


def shares_add_tables(ladder: Ladder, tables: Sequence[Sequence[int]]) -> None:
    """Count tables just made (bots in seat order); a duplicate group counts each rotation."""
    if ladder.shares_since is not None:
        _apply(ladder, _count((bot, seat) for t in tables for seat, bot in enumerate(t)), 1)


def shares_take_out_cancelled(match_ids: Iterable[int]) -> None:
    """Take out ladder tables about to be cancelled that the shares count."""
    rows = (
        Match.objects.filter(pk__in=list(match_ids), ladder__isnull=False)
        .exclude(status=MatchStatus.CANCELLED)
        .select_related("ladder")
    )
    by_ladder: dict[int, list[int]] = {}
    ladders: dict[int, Ladder] = {}
    for match in rows:
        ladder = match.ladder
        if ladder is None or ladder.shares_since is None or match.created_at < ladder.shares_since:
            continue
        ladders[ladder.pk] = ladder
        by_ladder.setdefault(ladder.pk, []).append(match.pk)
    for ladder_id, ids in by_ladder.items():
        _apply(ladders[ladder_id], _counted(Match.objects.filter(pk__in=ids)), -1)
