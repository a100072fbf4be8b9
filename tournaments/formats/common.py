"""Shared pieces of fixture generation: the fixture value, validation, seeds and seat balancing.

Seat balance matters because the engine picks the first dealer from the match seed and then
passes the deal clockwise after every deal: an organiser cannot steer the dealer, but by
spreading each bot evenly over the seat positions every bot meets every position (and so every
bidding order relative to the first dealer) equally often.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

MIN_TABLE = 3
MAX_TABLE = 8


class FixtureError(ValueError):
    """Fixtures cannot be generated from these arguments; the message names the offending one."""


@dataclass(frozen=True, slots=True)
class Fixture:
    """One match to play: ``seats[i]`` is the bot at seat ``i``; ``seed`` deals the cards."""

    round: int
    table: int
    seats: tuple[int, ...]
    seed: int
    duplicate_group: str = ""
    # A ladder round its table is rated with (Match.table_round); "" elsewhere.
    table_round: str = ""


def fixture_seed(seed: int, *parts: object) -> int:
    """Derive a 63-bit seed from the tournament seed, stable across processes and versions."""
    text = ":".join(str(part) for part in (seed, *parts))
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def derived_rng(seed: int, *parts: object) -> random.Random:
    """Return a generator private to one purpose, so formats never share a random stream."""
    return random.Random(fixture_seed(seed, *parts))


def check_table_size(table_size: int) -> None:
    """Refuse table sizes the engine cannot seat."""
    if not MIN_TABLE <= table_size <= MAX_TABLE:
        raise FixtureError(f"table_size must be {MIN_TABLE}..{MAX_TABLE}, got {table_size}")


def check_bots(bots: Sequence[int], table_size: int) -> list[int]:
    """Validate the entry list against the table size and return it as a list."""
    check_table_size(table_size)
    entries = list(bots)
    if len(set(entries)) != len(entries):
        repeated = sorted(bot for bot, n in Counter(entries).items() if n > 1)
        raise FixtureError(f"bots must be distinct; repeated: {repeated}")
    if len(entries) < table_size:
        raise FixtureError(
            f"{len(entries)} bots cannot fill a table of {table_size}; "
            f"need at least {table_size} bots"
        )
    return entries


def check_rounds(rounds: int) -> None:
    """Refuse an empty or negative schedule."""
    if rounds < 1:
        raise FixtureError(f"rounds must be at least 1, got {rounds}")


def pair_counts(tables: Iterable[Iterable[int]]) -> Counter[frozenset[int]]:
    """Count how often each pair of bots shared a table."""
    counts: Counter[frozenset[int]] = Counter()
    for table in tables:
        counts.update(frozenset(pair) for pair in combinations(table, 2))
    return counts


def seat_counts(fixtures: Iterable[Fixture]) -> dict[int, Counter[int]]:
    """Count, per bot, how often it sat at each seat position."""
    counts: dict[int, Counter[int]] = {}
    for fixture in fixtures:
        for seat, bot in enumerate(fixture.seats):
            counts.setdefault(bot, Counter())[seat] += 1
    return counts


def balance_seats(
    tables: Sequence[Sequence[int]], table_size: int, rng: random.Random
) -> list[tuple[int, ...]]:
    """Seat full tables so that each bot's count at every seat differs by at most one.

    Tables and bots form a bipartite graph; seats are edge colours. Each bot's appearances are
    split, in order, into blocks of ``table_size``, so every vertex has degree at most
    ``table_size`` and a proper edge colouring with that many colours exists (Konig). A table
    then uses every seat once and each block of a bot's matches visits every seat at most once.
    """
    colour_at: dict[tuple, dict[int, tuple]] = {}
    appearances: Counter[int] = Counter()
    for index, table in enumerate(tables):
        for bot in table:
            block = ("bot", bot, appearances[bot] // table_size)
            appearances[bot] += 1
            _colour_edge(colour_at, ("table", index), block, table_size, rng)
    seated = []
    for index in range(len(tables)):
        at_table = colour_at[("table", index)]
        seated.append(tuple(at_table[seat][1] for seat in range(table_size)))
    return seated


def _colour_edge(
    colour_at: dict[tuple, dict[int, tuple]], u: tuple, v: tuple, colours: int, rng: random.Random
) -> None:
    """Colour edge u-v, flipping an alternating path when no colour is free at both ends."""
    at_u = colour_at.setdefault(u, {})
    at_v = colour_at.setdefault(v, {})
    a = rng.choice([c for c in range(colours) if c not in at_u])
    if a in at_v:
        b = rng.choice([c for c in range(colours) if c not in at_v])
        path, x, c = [], v, a
        while c in colour_at[x]:
            y = colour_at[x][c]
            path.append((x, y, c))
            x, c = y, (b if c == a else a)
        for x, y, c in path:
            del colour_at[x][c], colour_at[y][c]
        for x, y, c in path:
            swapped = b if c == a else a
            colour_at[x][swapped], colour_at[y][swapped] = y, x
    at_u[a], at_v[a] = v, u


def seat_by_history(
    table: Sequence[int], history: Mapping[int, Sequence[int]] | None, rng: random.Random
) -> tuple[int, ...]:
    """Seat one table so each bot leans towards the seats it has used least so far."""
    order = list(table)
    rng.shuffle(order)
    if not history:
        return tuple(order)

    def cost(bot: int, seat: int) -> int:
        past = history.get(bot, ())
        return past[seat] if seat < len(past) else 0

    improved = True
    while improved:
        improved = False
        for i, j in combinations(range(len(order)), 2):
            now = cost(order[i], i) + cost(order[j], j)
            if cost(order[j], i) + cost(order[i], j) < now:
                order[i], order[j] = order[j], order[i]
                improved = True
    return tuple(order)
