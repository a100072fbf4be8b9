"""Round robin: every bot plays the same number of matches, seats balanced, opponents varied.

How the counts are made equal. With ``n`` bots at tables of ``k``, a round seats ``n // k``
tables and the ``n % k`` bots left over sit out. Equal counts need a multiple of
``n / gcd(n, k)`` tables (``lcm(n, k) / k``), in which every bot plays ``k / gcd(n, k)`` times:
so ``rounds`` is read as "each bot plays at least ``rounds`` matches" and rounded up to the next
multiple of ``k / gcd(n, k)`` (see :func:`matches_per_bot`). When ``k`` divides ``n`` that is
exactly ``rounds`` full rounds. Otherwise each round takes the bots with the fewest matches so
far (so counts never drift apart by more than one) and the last round may seat fewer tables.

Seats: every bot's matches are cut, in order, into blocks of ``k`` and seats are assigned as a
bipartite edge colouring (see :func:`~tournaments.formats.common.balance_seats`), so each bot's
count at each seat differs by at most one, and any block of ``k`` matches visits every seat.

Opponents: tables within a round are grown greedily, adding the bot that has met the table's
members least often, with random tie-breaks and a few restarts keeping the best grouping.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations
from math import gcd

from tournaments.formats.common import (
    Fixture,
    balance_seats,
    check_bots,
    check_rounds,
    check_table_size,
    derived_rng,
    fixture_seed,
)

RESTARTS = 6


def matches_per_bot(bots: int, table_size: int, rounds: int) -> int:
    """Return how many matches each bot plays, so organisers see the rounding up in advance."""
    check_table_size(table_size)
    check_rounds(rounds)
    step = table_size // gcd(bots, table_size)
    return -(-rounds // step) * step


def round_robin(bots: Sequence[int], table_size: int, rounds: int, seed: int) -> list[Fixture]:
    """Schedule a round robin in which every bot plays the same number of matches."""
    entries = check_bots(bots, table_size)
    rng = derived_rng(seed, "round-robin")
    tables_by_round = round_robin_tables(entries, table_size, rounds, rng)
    flat = [table for tables in tables_by_round for table in tables]
    seated = iter(balance_seats(flat, table_size, rng))
    return [
        Fixture(round=r, table=t, seats=next(seated), seed=fixture_seed(seed, r, t))
        for r, tables in enumerate(tables_by_round)
        for t in range(len(tables))
    ]


def round_robin_tables(
    bots: list[int], table_size: int, rounds: int, rng: random.Random
) -> list[list[tuple[int, ...]]]:
    """Group bots into unseated tables, round by round, with equal match counts."""
    per_bot = matches_per_bot(len(bots), table_size, rounds)
    remaining = len(bots) * per_bot // table_size
    per_round = len(bots) // table_size
    played = [0] * len(bots)
    met = [[0] * len(bots) for _ in bots]
    schedule = []
    while remaining:
        count = min(per_round, remaining)
        must, ties, wanted = _candidates(played, count * table_size, rng)
        tables = _best_grouping(must, ties, wanted, table_size, met, rng)
        for table in tables:
            for x, y in combinations(table, 2):
                met[x][y] += 1
                met[y][x] += 1
            for x in table:
                played[x] += 1
        schedule.append([tuple(bots[x] for x in table) for table in tables])
        remaining -= count
    return schedule


def _candidates(played: list[int], seats: int, rng: random.Random) -> tuple[list, list, int]:
    """Split bots into those who must play now and the tied group the rest are drawn from."""
    order = sorted(range(len(played)), key=played.__getitem__)
    cutoff = played[order[seats - 1]]
    must = [x for x in order if played[x] < cutoff]
    ties = [x for x in order if played[x] == cutoff]
    rng.shuffle(ties)
    return must, ties, seats - len(must)


def _best_grouping(
    must: list[int],
    ties: list[int],
    wanted: int,
    table_size: int,
    met: list[list[int]],
    rng: random.Random,
) -> list[list[int]]:
    """Try a few greedy groupings, polish each by swaps, and keep the fewest repeat meetings."""
    best, best_cost = [], None
    for _ in range(RESTARTS):
        rng.shuffle(ties)
        tables = _greedy_grouping(must + ties[:wanted], table_size, met, rng)
        bench = ties[wanted:]
        _improve(tables, bench, set(ties), met)
        cost = sum(met[x][y] for table in tables for x, y in combinations(table, 2))
        if best_cost is None or cost < best_cost:
            best, best_cost = tables, cost
        if cost == 0:
            break
    return best


def _greedy_grouping(
    playing: list[int], table_size: int, met: list[list[int]], rng: random.Random
) -> list[list[int]]:
    """Grow tables one bot at a time, adding whoever has met the table least."""
    pool = list(playing)
    rng.shuffle(pool)
    tables = []
    while pool:
        table = [pool.pop()]
        while len(table) < table_size:
            scores = [sum(met[x][y] for y in table) for x in pool]
            low = min(scores)
            pick = rng.choice([i for i, score in enumerate(scores) if score == low])
            table.append(pool.pop(pick))
        tables.append(table)
    return tables


def _improve(
    tables: list[list[int]], bench: list[int], movable: set[int], met: list[list[int]]
) -> None:
    """Swap bots between tables (or with benched tied bots) while that lowers repeat meetings."""
    groups = [*tables, bench]
    scored = len(tables)

    def cost(x: int, group: int, without: int) -> int:
        if group == scored:
            return 0
        return sum(met[x][y] for y in groups[group] if y != without)

    improved = True
    while improved:
        improved = False
        for a, b in combinations(range(len(groups)), 2):
            for i, x in enumerate(groups[a]):
                for j, y in enumerate(groups[b]):
                    if b == scored and x not in movable:
                        continue
                    before = cost(x, a, x) + cost(y, b, y)
                    if cost(y, a, x) + cost(x, b, y) < before:
                        groups[a][i], groups[b][j] = y, x
                        x = y
                        improved = True
