"""Reads of rated matches: their seats and standings, the matches that changed the public
ratings, and the finishing orders the batch fit reads."""

from __future__ import annotations

from typing import NamedTuple

from django.db.models import QuerySet

from engine.scoring import rating_ranks
from tournaments.maths.intervals import Finish
from tournaments.models import Match, MatchSeat


class SeatRow(NamedTuple):
    """One seat of a played match."""

    seat: int
    bot_id: int
    score: int | None
    disqualified: bool
    # Refused every request of the match, within its grace (MatchSeat.refused_every_request
    # and not refusal_counted): left out of it. A counted refusal is a disqualified seat.
    refused: bool = False


class Standing(NamedTuple):
    """The bots of one update with the ranks TrueSkill takes (1 best)."""

    bots: list[int]
    ranks: list[int]


def match_standing(seats: list[SeatRow]) -> Standing:
    """One match's bots in seat order with their places: by total, equal totals sharing one,
    disqualified seats sharing last (the batch fit reads them too: services/rank_intervals.py);
    a seat that refused every request is left out, the others ranked among themselves."""
    seats = sorted(s for s in seats if not s.refused)
    ranks = rating_ranks([s.score or 0 for s in seats], [s.disqualified for s in seats])
    return Standing([s.bot_id for s in seats], ranks)


def seats_by_match(match_ids: list[int]) -> dict[int, list[SeatRow]]:
    """The seats of these matches by match id, a counted refusal read as disqualified."""
    seats: dict[int, list[SeatRow]] = {m: [] for m in match_ids}
    rows = MatchSeat.objects.filter(match_id__in=match_ids).values_list(
        "match_id",
        "seat",
        "bot_id",
        "score",
        "disqualified",
        "refused_every_request",
        "refusal_counted",
    )
    for match_id, seat, bot_id, score, disqualified, refused, counted in rows:
        row = SeatRow(seat, bot_id, score, disqualified or counted, refused and not counted)
        seats[match_id].append(row)
    return seats


def counted_matches() -> QuerySet[Match]:
    """The matches that changed the public ratings, the ones a recompute replays."""
    return Match.objects.filter(rated=True, rating_sequence__isnull=False)


def latest_finishes(*, variant_id: int, limit: int) -> list[list[Finish]]:
    """The finishing orders of a variant's latest ``limit`` matches that changed its ratings,
    oldest first, each table its own unit but a duplicate group's rotations, which share their
    deals, one unit together (a ladder round's tables were dealt apart): what the batch ranks
    read, and the units the collusion sums count (services/rating_core.py)."""
    rows = list(
        counted_matches()
        .filter(variant_id=variant_id)
        .order_by("-rating_sequence")
        .values_list("pk", "rating_group", "duplicate_group")[:limit]
    )
    rows.reverse()
    seats = seats_by_match([pk for pk, _, _ in rows])
    units: dict[str | int, list[Finish]] = {}
    for pk, group, dealt_together in rows:
        standing = match_standing(seats[pk])
        units.setdefault(group if group and dealt_together else pk, []).append(
            Finish(bots=tuple(standing.bots), places=tuple(standing.ranks))
        )
    return list(units.values())
