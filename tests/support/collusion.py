"""Finishing orders of a field of bots of known strength, with one pair colluding if asked,
and the same stored as rated matches."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from tournaments.maths.intervals import Finish
from tournaments.models import Bot, Match, MatchSeat, MatchStatus, Variant


@dataclass(frozen=True, slots=True)
class Planted:
    """At every table both sit at, the partner finishes last, and the beneficiary then swaps
    places with the bot just above it with this chance (what helping it make its bids gives)."""

    beneficiary: int
    partner: int
    lift: float = 0.5


def season(
    bots: int, tables: int, seed: int, *, seats: int = 4, planted: Planted | None = None
) -> list[Finish]:
    """``tables`` finishes of ``seats`` bots drawn at random from ``bots`` (0 strongest), each
    order drawn Plackett-Luce with log-strengths falling evenly from 1 to -1."""
    rng = random.Random(seed)
    weight = [math.exp(1.0 - 2.0 * b / max(1, bots - 1)) for b in range(bots)]
    finishes = []
    for _ in range(tables):
        table = rng.sample(range(bots), seats)
        left = list(table)
        order = []
        while left:
            pick = rng.choices(left, weights=[weight[b] for b in left])[0]
            order.append(pick)
            left.remove(pick)
        if planted is not None and {planted.beneficiary, planted.partner} <= set(table):
            order.remove(planted.partner)
            order.append(planted.partner)
            at = order.index(planted.beneficiary)
            if at > 0 and rng.random() < planted.lift:
                order[at - 1], order[at] = order[at], order[at - 1]
        place = {bot: i + 1 for i, bot in enumerate(order)}
        finishes.append(Finish(bots=tuple(table), places=tuple(place[b] for b in table)))
    return finishes


def store_season(
    variant: Variant, bots: Sequence[Bot], *, tables: int, seed: int, planted: Planted | None
) -> None:
    """Rated matches whose totals give the season's finishing orders (10 points a place)."""
    when = timezone.now() - timedelta(days=1)
    finishes = season(len(bots), tables, seed, planted=planted)
    matches = Match.objects.bulk_create(
        Match(
            variant=variant,
            status=MatchStatus.FINISHED,
            started_at=when,
            finished_at=when,
            rated=True,
            rated_at=when,
            rating_sequence=i + 1,
        )
        for i in range(len(finishes))
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=match, seat=seat, bot=bots[bot], score=10 * (5 - place), rank=place)
        for match, finish in zip(matches, finishes, strict=True)
        for seat, (bot, place) in enumerate(zip(finish.bots, finish.places, strict=True))
    )
