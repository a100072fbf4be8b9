"""Finishing orders of a field of bots of known strength, with one pair colluding if asked,
and the same stored as rated matches."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from tournaments.maths.intervals import Finish
from tournaments.models import Bot, Match, MatchSeat, MatchStatus, Variant
from tournaments.services.ratings import ratings_apply_pending


@dataclass(frozen=True, slots=True)
class Planted:
    """At every table both sit at, the partner finishes last, and the beneficiary then swaps
    places with the bot just above it with this chance (what helping it make its bids gives).

    A ring has more partners, each helping as the first does; with ``seated`` above 0 a table
    of the beneficiary's gets one of them sat at it on purpose with that chance (a ring that
    found a way to share tables), where otherwise they meet only as the draw seats them.
    """

    beneficiary: int
    partner: int
    lift: float = 0.5
    ring: tuple[int, ...] = ()
    seated: float = 0.0

    @property
    def partners(self) -> tuple[int, ...]:
        return (self.partner, *self.ring)


def log_strength(bots: int, bot: int) -> float:
    """A season's bot's Plackett-Luce log-strength: falling evenly from 1 (bot 0) to -1."""
    return 1.0 - 2.0 * bot / max(1, bots - 1)


def true_chance(bots: int) -> Callable[[int, int], float]:
    """The chance a season's bot finishes above another, from the strengths it was drawn with."""

    def chance(x: int, y: int) -> float:
        return 1.0 / (1.0 + math.exp(log_strength(bots, y) - log_strength(bots, x)))

    return chance


def season(
    bots: int, tables: int, seed: int, *, seats: int = 4, planted: Planted | None = None
) -> list[Finish]:
    """``tables`` finishes of ``seats`` bots drawn at random from ``bots`` (0 strongest), each
    order drawn Plackett-Luce with log-strengths falling evenly from 1 to -1."""
    rng = random.Random(seed)
    weight = [math.exp(log_strength(bots, b)) for b in range(bots)]
    finishes = []
    for _ in range(tables):
        table = rng.sample(range(bots), seats)
        if planted is not None and planted.seated > 0:
            _seat_partner(rng, table, planted)
        left = list(table)
        order = []
        while left:
            pick = rng.choices(left, weights=[weight[b] for b in left])[0]
            order.append(pick)
            left.remove(pick)
        helping = [] if planted is None else [p for p in planted.partners if p in table]
        if planted is not None and helping and planted.beneficiary in table:
            for partner in helping:
                order.remove(partner)
                order.append(partner)
            at = order.index(planted.beneficiary)
            if at > 0 and rng.random() < planted.lift:
                order[at - 1], order[at] = order[at], order[at - 1]
        place = {bot: i + 1 for i, bot in enumerate(order)}
        finishes.append(Finish(bots=tuple(table), places=tuple(place[b] for b in table)))
    return finishes


def _seat_partner(rng: random.Random, table: list[int], planted: Planted) -> None:
    """With the ring's chance, put one of its partners at a table of the beneficiary's."""
    if planted.beneficiary not in table or any(p in table for p in planted.partners):
        return
    if rng.random() < planted.seated:
        seat = rng.choice([i for i, b in enumerate(table) if b != planted.beneficiary])
        table[seat] = rng.choice(planted.partners)


def store_season(
    variant: Variant, bots: Sequence[Bot], *, tables: int, seed: int, planted: Planted | None
) -> None:
    """Rated matches whose totals give the season's finishing orders (10 points a place), one
    at a time in the season's order."""
    when = timezone.now() - timedelta(days=1)
    finishes = season(len(bots), tables, seed, planted=planted)
    matches = Match.objects.bulk_create(
        Match(
            variant=variant,
            status=MatchStatus.FINISHED,
            started_at=when,
            finished_at=when,
        )
        for _ in finishes
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=match, seat=seat, bot=bots[bot], score=10 * (5 - place), rank=place)
        for match, finish in zip(matches, finishes, strict=True)
        for seat, (bot, place) in enumerate(zip(finish.bots, finish.places, strict=True))
    )
    # Rated as any finished match is, which adds them to the collusion sums.
    assert ratings_apply_pending() == len(finishes)
