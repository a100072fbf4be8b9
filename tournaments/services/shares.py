"""A ladder's shares: each bot's tables in the matchmaker's window (``SHARE_WINDOW``) and the
shares of the tables it is owed (its weight, from its rating), kept as tables are made,
cancelled and leave the window and as ratings change, so a top-up reads its slate in the
order of the shares' index (``ladder_slate`` in tournaments/selectors/ladders.py), about as
many rows as the slate holds, however large the field, however long the ladder's history and
however many tables it makes a day.

A ladder's shares count its tables not cancelled that were made at or after
``Ladder.shares_since``; a top-up first moves that time on to the window's start, once it is
a step (``SHARE_WINDOW_STEP``) behind, and takes out the tables made in between, reading only
those; it then sweeps the shares (``shares_sweep``): a share for every opted-in bot, and the
shares of bots that cannot play now parked, out of the index. Whatever lets a bot play again
(an opt-in, a passed check, a confirmed address) brings its shares back at once
(``shares_seat``, ``shares_seat_soon``).

Every change of the tables runs inside a top-up, which holds every running ladder's row
(tournaments/services/ladders.py), so no two change one ladder's shares at once; a rating write
changes only the weights (``shares_reweigh``). Every writer locks the rows it writes ladder by
ladder and in id order, so no two deadlock over them (and a top-up leaves the variants' rows
unlocked: tests/tournaments/services/test_ladder_locks.py). ``shares_rebuild`` counts the
shares afresh from the window's tables: what a ladder does the first time, and what the kept
counts always equal (tests/tournaments/services/test_ladder_shares.py). A weight follows the
matchmaker's parameters and ``RATING_PROVISIONAL_MATCHES`` as they were at the bot's last
rating write.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from django.db import transaction
from django.db.models import QuerySet

from tournaments.formats.matchmaking import MatchmakingParams, weight_of
from tournaments.maths.ratings import RatingParams
from tournaments.models import (
    Bot,
    Ladder,
    LadderShare,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    new_tiebreak,
)
from tournaments.provisional import is_provisional
from tournaments.selectors.ladders import SHARE_WINDOW, SHARE_WINDOW_STEP, playable_bots
from tournaments.services.rows import update_rows

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


class RatedBot(NamedTuple):
    """What a bot's share weight is made of: its rating's sigma and rated units in a variant."""

    bot_id: int
    variant_id: int
    sigma: float
    matches: int


def _weights(ladder: Ladder, bot_ids: Iterable[int]) -> dict[int, float]:
    """The share weight of each of these bots on the ladder, from its rating in the ladder's
    variant (the variant's starting sigma, provisional, before its first rated match)."""
    wanted = set(bot_ids)
    start = RatingParams.from_dict(ladder.variant.rating_params)
    rated = {
        bot_id: (sigma, matches)
        for bot_id, sigma, matches in Rating.objects.filter(
            variant_id=ladder.variant_id, bot_id__in=wanted
        ).values_list("bot_id", "sigma", "matches")
    }
    return {bot_id: _weight(*rated.get(bot_id, (start.sigma, 0))) for bot_id in wanted}


def _weight(sigma: float, matches: int) -> float:
    """The share weight of a rating with this sigma and these rated units."""
    return weight_of(sigma, is_provisional(matches), MatchmakingParams())


def _apply(ladder: Ladder, counts: SeatCounts, sign: int) -> None:
    """Add (``sign`` 1) or take out (-1) these tables from the ladder's shares; a share whose
    tables change draws a new place among those owed as much (``new_tiebreak``)."""
    if not counts:
        return
    existing = {
        share.bot_id: share
        for share in LadderShare.objects.select_for_update()
        .filter(ladder=ladder, bot__in=counts)
        .order_by("pk")
    }
    changed, new = [], []
    weights = _weights(ladder, counts.keys() - existing.keys())
    for bot_id, by_seat in counts.items():
        share = existing.get(bot_id)
        if share is None:
            share = LadderShare(ladder=ladder, bot_id=bot_id, tables=0, seats=[])
            share.weight = weights[bot_id]
            new.append(share)
        else:
            changed.append(share)
        seats = list(share.seats) + [0] * max(0, len(by_seat) - len(share.seats))
        for position, n in enumerate(by_seat):
            seats[position] += sign * n
        share.seats = seats
        share.tables += sign * sum(by_seat)
        share.tiebreak = new_tiebreak()
        if share.tables < 0 or min(seats) < 0:
            raise ValueError(f"the share of bot {bot_id} on ladder {ladder.pk} went below 0")
    LadderShare.objects.bulk_create(new)
    update_rows(LadderShare, changed, ["tables", "seats", "tiebreak"])


def shares_sweep(ladder: Ladder) -> None:
    """Give every opted-in bot without a share on the ladder one, of no tables (it has had none
    since the shares were counted, or it would have a share), and park the shares of bots the
    ladders may not seat now (``playable_bots``), unparking the others.

    Run as the window moves: it catches within a step whatever changed by paths that do not
    call ``shares_seat`` (the admin, a script), and keeps the index of shares free of bots
    that cannot play, so a top-up does not read past them.
    """
    missing = list(
        Bot.objects.filter(ladder_opt_in=True)
        .exclude(ladder_shares__ladder=ladder)
        .values_list("pk", flat=True)
    )
    _create(ladder, missing)
    shares = LadderShare.objects.filter(ladder=ladder)
    _set_parked(shares.filter(parked=False).exclude(bot__in=playable_bots()), True)
    _set_parked(shares.filter(parked=True, bot__in=playable_bots()), False)


def _set_parked(shares: QuerySet[LadderShare], parked: bool) -> None:
    """Park or unpark these shares, their rows locked in id order first (as every writer of
    shares locks them)."""
    ids = list(shares.select_for_update().order_by("pk").values_list("pk", flat=True))
    if ids:
        LadderShare.objects.filter(pk__in=ids).update(parked=parked)


def shares_seat(bot_ids: Iterable[int]) -> None:
    """Bring these bots into every ladder's index of shares now (a bot just opted in, the bots
    of an account that just confirmed its address): a share of no tables where it has none,
    and its parked shares unparked. The next top-up's slate checks whether each may play; the
    next move of the window parks those that may not."""
    wanted = set(bot_ids)
    if not wanted:
        return
    with transaction.atomic():
        ladders = Ladder.objects.filter(shares_since__isnull=False).select_related("variant")
        for ladder in ladders.order_by("pk"):
            theirs = LadderShare.objects.filter(ladder=ladder, bot_id__in=wanted)
            _create(ladder, sorted(wanted - set(theirs.values_list("bot_id", flat=True))))
            _set_parked(theirs.filter(parked=True), False)


def shares_seat_soon(bot_ids: Iterable[int]) -> None:
    """``shares_seat`` once the current transaction commits (a bot just active again): a caller
    holding a bot's row for update (a check does) must not wait for shares that a top-up or a
    rating write holds while it waits to check that bot's row at its own commit."""
    wanted = set(bot_ids)
    if wanted:
        transaction.on_commit(lambda: shares_seat(wanted))


def _create(ladder: Ladder, bot_ids: list[int]) -> None:
    if not bot_ids:
        return
    weights = _weights(ladder, bot_ids)
    LadderShare.objects.bulk_create(
        [LadderShare(ladder=ladder, bot_id=b, weight=weights[b]) for b in bot_ids],
        ignore_conflicts=True,
    )


def shares_reweigh(rated: Iterable[RatedBot]) -> None:
    """Write the share weights of bots whose ratings just changed, on their variants' ladders."""
    by_variant: dict[int, dict[int, RatedBot]] = {}
    for row in rated:
        by_variant.setdefault(row.variant_id, {})[row.bot_id] = row
    ladders = Ladder.objects.filter(variant_id__in=by_variant, shares_since__isnull=False)
    for ladder_id, variant_id in ladders.order_by("pk").values_list("pk", "variant_id"):
        rows = by_variant[variant_id]
        shares = list(
            LadderShare.objects.select_for_update()
            .filter(ladder_id=ladder_id, bot_id__in=rows)
            .order_by("pk")
            .only("pk", "bot_id", "weight")
        )
        for share in shares:
            row = rows[share.bot_id]
            share.weight = _weight(row.sigma, row.matches)
        update_rows(LadderShare, shares, ["weight"])


def shares_reweigh_all() -> None:
    """Write every share's weight from the ratings as they stand (after a recompute, which
    may leave a bot unrated)."""
    ladders = Ladder.objects.filter(shares_since__isnull=False).select_related("variant")
    for ladder in ladders.order_by("pk"):
        shares = list(
            LadderShare.objects.select_for_update()
            .filter(ladder=ladder)
            .order_by("pk")
            .only("pk", "bot_id", "weight")
        )
        weights = _weights(ladder, (share.bot_id for share in shares))
        for share in shares:
            share.weight = weights[share.bot_id]
        update_rows(LadderShare, shares, ["weight"])


@transaction.atomic
def shares_rebuild(ladder: Ladder, *, now: datetime) -> None:
    """Count the ladder's shares afresh from its tables made within the window before ``now``,
    and give every other opted-in bot a share of none."""
    since = now - SHARE_WINDOW
    LadderShare.objects.filter(ladder=ladder).delete()
    _apply(ladder, _counted(Match.objects.filter(ladder=ladder, created_at__gte=since)), 1)
    shares_sweep(ladder)
    ladder.shares_since = since
    ladder.save(update_fields=["shares_since", "updated_at"])


def shares_move_window(ladder: Ladder, *, now: datetime) -> None:
    """Take out the tables that left the window since it last moved, once it is a step
    (``SHARE_WINDOW_STEP``) behind, and sweep the shares (or count them all, the first
    time)."""
    since = now - SHARE_WINDOW
    if ladder.shares_since is None:
        shares_rebuild(ladder, now=now)
        return
    if ladder.shares_since > since - SHARE_WINDOW_STEP:
        return
    left = Match.objects.filter(
        ladder=ladder, created_at__gte=ladder.shares_since, created_at__lt=since
    )
    _apply(ladder, _counted(left), -1)
    shares_sweep(ladder)
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
