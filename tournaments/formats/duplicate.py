"""Duplicate: the same deals replayed with the same bots rotated through every seat.

Tables are chosen exactly as in the round robin (equal match counts, varied opponents). Each
table then becomes a group of ``k`` fixtures sharing one deal seed and one ``duplicate_group``:
rotation ``r`` moves the bot of base seat ``j`` to seat ``(j + r) % k``. Every bot therefore
holds every seat's cards of the same deals exactly once, so the luck of the cards cancels and
seat counts are perfectly equal. The rotation keeps the clockwise order of the bots, which
is the most that ``k`` replays (rather than ``k!``) can offer.

Results are compared deal by deal (:func:`duplicate_differences`): for each deal and seat, a
bot scores the difference between its points and the mean of the group's rotations at that
seat and deal, i.e. what it made of those exact cards compared with the others.

Only for bots whose code the organiser trusts (e.g. reviewed course submissions). Every card
dealt is played, so the bots see the same deals again and a bot that remembers what it saw
recognises a deal from its own hand and knows the other seats' cards in the later rotations;
in a tournament the rotations may even be played at the same time, so one bot can pass on what
it sees in one to itself in another. The always-on ladders deal every table afresh unless
staff switch duplicate on (tournaments/models/ladders.py); tests/tournaments/test_memorising_bot.py
plays such a bot on a ladder either way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tournaments.formats.common import Fixture, check_bots, derived_rng, fixture_seed
from tournaments.formats.round_robin import round_robin_count, round_robin_tables


@dataclass(frozen=True, slots=True)
class DuplicateResult:
    """One played fixture of a group: ``scores[seat][deal]`` is the points of that seat."""

    duplicate_group: str
    seats: tuple[int, ...]
    scores: Sequence[Sequence[float]]


def rotations(seats: Sequence[int]) -> list[tuple[int, ...]]:
    """Return the ``k`` seatings in which every bot takes every seat once, clockwise order kept."""
    k = len(seats)
    return [tuple(seats[(i - r) % k] for i in range(k)) for r in range(k)]


def duplicate_count(bots: int, table_size: int, rounds: int) -> int:
    """Return how many matches :func:`duplicate` schedules: every round-robin table, rotated."""
    return round_robin_count(bots, table_size, rounds) * table_size


def duplicate(bots: Sequence[int], table_size: int, rounds: int, seed: int) -> list[Fixture]:
    """Schedule duplicate groups: round-robin tables, each replayed in every seat rotation."""
    entries = check_bots(bots, table_size)
    rng = derived_rng(seed, "duplicate")
    fixtures = []
    for r, tables in enumerate(round_robin_tables(entries, table_size, rounds, rng)):
        for g, table in enumerate(tables):
            base = list(table)
            rng.shuffle(base)
            deal_seed = fixture_seed(seed, "duplicate", r, g)
            for turn, seats in enumerate(rotations(base)):
                fixtures.append(
                    Fixture(
                        round=r,
                        table=g * table_size + turn,
                        seats=seats,
                        seed=deal_seed,
                        duplicate_group=f"{r}.{g}",
                    )
                )
    return fixtures


def duplicate_differences(results: Iterable[DuplicateResult]) -> dict[int, float]:
    """Sum, per bot, its points minus the group's mean at the same seat and deal.

    Missing fixtures (failed matches) and games of different lengths are handled deal by deal:
    a seat and deal is compared over the rotations that played it, and one that only a single
    rotation played counts zero, because there is nothing to compare with.
    """
    by_cell: dict[tuple[str, int, int], list[tuple[int, float]]] = defaultdict(list)
    totals: dict[int, float] = {}
    for result in results:
        for seat, bot in enumerate(result.seats):
            totals.setdefault(bot, 0.0)
            for deal, points in enumerate(result.scores[seat]):
                by_cell[result.duplicate_group, seat, deal].append((bot, float(points)))
    for played in by_cell.values():
        par = sum(points for _, points in played) / len(played)
        for bot, points in played:
            totals[bot] += points - par
    return totals
