"""Writing what a bot's analytics are read from: each seat's deals of a recorded match tallied
by hand size and place relative to the dealer (``SeatTally``), and dropping cached analytics
once something they show has changed.

Analytics show public data only: a scrimmage's matches are private (tournaments/selectors/
matches.py, ``public``), so they are never tallied; every other finished match is.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db import transaction

from tournaments.cache_keys import bot_analytics_key
from tournaments.models import Match, MatchSeat, MatchStatus, Replay, SeatTally
from tournaments.selectors.matches import public

log = logging.getLogger(__name__)

BACKFILL_CHUNK = 200


@dataclass(frozen=True)
class DealTally:
    """One seat's deals of one hand size from one place relative to the dealer."""

    hand_size: int
    after_dealer: int
    deals: int
    exact: int
    points: int


def deal_tallies(replay: Mapping[str, Any], seat: int) -> list[DealTally]:
    """The seat's bid deals of a replay (engine/replay.py), tallied by hand size and by how
    many seats after the dealer it sat (0: the dealer)."""
    players = int(replay["players"])
    counts: dict[tuple[int, int], list[int]] = {}
    for deal in replay["deals"]:
        bid = deal["bids"][seat]
        if bid is None:
            continue  # not reached in an unfinished record
        key = (int(deal["hand_size"]), (seat - int(deal["dealer"])) % players)
        tally = counts.setdefault(key, [0, 0, 0])
        tally[0] += 1
        tally[1] += bid == deal["tricks_won"][seat]
        tally[2] += int(deal["scores"][seat])
    return [
        DealTally(hand_size=h, after_dealer=p, deals=n, exact=e, points=pts)
        for (h, p), (n, e, pts) in sorted(counts.items())
    ]


def seat_tallies_write(
    *, match: Match, seats: Iterable[MatchSeat], replay: Mapping[str, Any]
) -> int:
    """Store the tallies of a finished match's seats from its replay; return how many rows.

    Part of recording the outcome (tournaments/services/outcomes.py): same transaction, so a
    match is tallied exactly when it is finished. Drops the seated bots' cached analytics once
    committed. A scrimmage's match is private and is not tallied (0 rows).
    """
    if match.scrimmage_id is not None:
        return 0
    seats = list(seats)
    players = int(replay["players"])
    rows = [
        SeatTally(
            seat=seat,
            bot_id=seat.bot_id,
            variant_id=match.variant_id,
            players=players,
            hand_size=t.hand_size,
            after_dealer=t.after_dealer,
            deals=t.deals,
            exact=t.exact,
            points=t.points,
        )
        for seat in seats
        for t in deal_tallies(replay, seat.seat)
    ]
    SeatTally.objects.bulk_create(rows)
    forget_bot_analytics({(seat.bot_id, match.variant_id) for seat in seats})
    return len(rows)


def forget_bot_analytics(pairs: set[tuple[int, int]]) -> None:
    """Once committed, drop the cached analytics of these (bot, variant) pairs."""
    keys = [bot_analytics_key(bot_id, variant_id) for bot_id, variant_id in pairs]

    def forget() -> None:
        try:
            cache.delete_many(keys)
        except Exception:  # any backend's failure: the entries expire by themselves
            log.warning("cache unavailable: bot analytics left to expire")

    transaction.on_commit(forget)


def seat_tallies_backfill(*, chunk: int = BACKFILL_CHUNK) -> int:
    """Tally every finished public match recorded before tallies were written; return how many.

    Resumable and safe to run again: a match is tallied in one transaction, and one whose
    seats already have tallies is skipped.
    """
    done = 0
    last = 0
    while True:
        ids = list(
            Match.objects.filter(
                public(), status=MatchStatus.FINISHED, pk__gt=last, replay__isnull=False
            )
            .exclude(seats__tallies__isnull=False)
            .order_by("pk")
            .values_list("pk", flat=True)[:chunk]
        )
        if not ids:
            return done
        last = ids[-1]
        replays = dict(Replay.objects.filter(match_id__in=ids).values_list("match_id", "data"))
        seats: dict[int, list[MatchSeat]] = {}
        for seat in MatchSeat.objects.filter(match_id__in=ids).only(
            "pk", "match_id", "seat", "bot_id"
        ):
            seats.setdefault(seat.match_id, []).append(seat)
        matches = Match.objects.filter(pk__in=ids).only("pk", "variant_id", "scrimmage_id")
        for match in matches:
            with transaction.atomic():
                seat_tallies_write(match=match, seats=seats[match.pk], replay=replays[match.pk])
            done += 1
