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
The colouring is made a stretch at a time, each stretch ending after a round where every bot has
played the same multiple of ``k`` matches (every ``k`` rounds when ``k`` divides ``n``): there
every bot's blocks are complete, so no later table can change an earlier seat, and the schedule
is handed out as it is made (:func:`round_robin_stream`) while later rounds are still grouped.

Opponents: tables within a round are grown greedily, adding the bot that has met the table's
members least often, with random tie-breaks and a few restarts keeping the best grouping.
"""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator, Sequence
from itertools import combinations
from math import gcd

from tournaments.formats.common import (
    Fixture,
    FixtureError,
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


def round_robin_count(bots: int, table_size: int, rounds: int) -> int:
    """Return how many matches :func:`round_robin` schedules, without scheduling them."""
    if bots < table_size:
        raise FixtureError(f"{bots} bots cannot fill a table of {table_size}")
    return bots * matches_per_bot(bots, table_size, rounds) // table_size


def round_robin(bots: Sequence[int], table_size: int, rounds: int, seed: int) -> list[Fixture]:
    """Schedule a round robin in which every bot plays the same number of matches."""
    return list(round_robin_stream(bots, table_size, rounds, seed))


def round_robin_stream(
    bots: Sequence[int], table_size: int, rounds: int, seed: int
) -> Iterator[Fixture]:
    """Yield :func:`round_robin`'s fixtures in order, each stretch as soon as it is seated."""
    entries = check_bots(bots, table_size)
    rng = derived_rng(seed, "round-robin")
    seat_rng = derived_rng(seed, "round-robin-seats")
    stretch: list[tuple[int, int, tuple[int, ...]]] = []
    played = dict.fromkeys(entries, 0)
    for r, tables in enumerate(_tables_by_round(entries, table_size, rounds, rng)):
        stretch += [(r, t, table) for t, table in enumerate(tables)]
        for table in tables:
            for bot in table:
                played[bot] += 1
        counts = set(played.values())
        if len(counts) == 1 and counts.pop() % table_size == 0:
            yield from _seated(stretch, table_size, seed, seat_rng)
            stretch = []
    yield from _seated(stretch, table_size, seed, seat_rng)


def _seated(
    stretch: list[tuple[int, int, tuple[int, ...]]],
    table_size: int,
    seed: int,
    rng: random.Random,
) -> Iterator[Fixture]:
    seated = balance_seats([table for _, _, table in stretch], table_size, rng)
    for (r, t, _), seats in zip(stretch, seated, strict=True):
        yield Fixture(round=r, table=t, seats=seats, seed=fixture_seed(seed, r, t))


def round_robin_tables(
    bots: list[int], table_size: int, rounds: int, rng: random.Random
) -> list[list[tuple[int, ...]]]:
    """Group bots into unseated tables, round by round, with equal match counts."""
    return list(_tables_by_round(bots, table_size, rounds, rng))


def _tables_by_round(
    bots: list[int], table_size: int, rounds: int, rng: random.Random
) -> Iterator[list[tuple[int, ...]]]:
    """Group bots into unseated tables, one round at a time, with equal match counts."""
    per_bot = matches_per_bot(len(bots), table_size, rounds)
    remaining = len(bots) * per_bot // table_size
    per_round = len(bots) // table_size
    played = [0] * len(bots)
    met = [[0] * len(bots) for _ in bots]
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
        remaining -= count
        yield [tuple(bots[x] for x in table) for table in tables]


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
    """Grow tables one bot at a time, adding whoever has met the table least.

    Each pool bot's meetings with the table are summed as the table grows, one member at a
    time, rather than again for every pick.
    """
    pool = list(playing)
    rng.shuffle(pool)
    tables = []
    while pool:
        table = [pool.pop()]
        row = met[table[0]]
        scores = [row[x] for x in pool]
        while len(table) < table_size:
            low = min(scores)
            pick = rng.choice([i for i, score in enumerate(scores) if score == low])
            scores.pop(pick)
            table.append(pool.pop(pick))
            if len(table) < table_size:
                row = met[table[-1]]
                scores = [score + row[x] for score, x in zip(scores, pool, strict=True)]
        tables.append(table)
    return tables


def _improve(
    tables: list[list[int]], bench: list[int], movable: set[int], met: list[list[int]]
) -> None:
    """Swap bots between tables (or with benched tied bots) while that lowers repeat meetings.

    Pairs of groups are scanned in order, the bench last, and a swap is made as soon as it
    lowers the two bots' meetings at their tables. A swap can only lower them when one of the
    two has already met someone at its table, so pairs of tables where nobody has are skipped:
    that keeps a pass near linear while most tables are fresh, and gives the same swaps as
    trying every pair.
    """
    own = {x: sum(met[x][y] for y in table) for table in tables for x in table}
    hot = [t for t, table in enumerate(tables) if any(own[x] for x in table)]
    # Whether a pair of groups can swap depends only on what the two hold: a pair scanned
    # without a swap is skipped until one of them changes (the bench is group len(tables)).
    changed = [0] * (len(tables) + 1)
    clean: dict[tuple[int, int], int] = {}
    clock = 1
    improved = True
    while improved:
        improved = False
        for a in range(len(tables)):
            towards: list[int] = []  # each bot's meetings with table a, made when first needed
            b = a + 1
            while b <= len(tables):
                if b < len(tables) and not (_is_hot(hot, a) or _is_hot(hot, b)):
                    b = hot[bisect_right(hot, b)] if hot and hot[-1] > b else len(tables)
                    continue
                if b == len(tables) and not (bench and _is_hot(hot, a)):
                    break
                if clean.get((a, b), 0) > max(changed[a], changed[b]):
                    b += 1
                    continue
                towards = towards or _meetings_with(tables[a], met)
                if b < len(tables):
                    swapped = _swap_tables(tables[a], tables[b], towards, own, met)
                else:
                    swapped = _swap_bench(tables[a], bench, towards, movable, own, met)
                if swapped:
                    improved = True
                    _reheat(hot, tables, own, a, b if b < len(tables) else None)
                    changed[a] = changed[b] = clock
                else:
                    clean[a, b] = clock
                clock += 1
                b += 1


def _is_hot(hot: list[int], table: int) -> bool:
    """Whether some bot at this table has already met another one there."""
    at = bisect_left(hot, table)
    return at < len(hot) and hot[at] == table


def _reheat(
    hot: list[int], tables: list[list[int]], own: dict[int, int], a: int, b: int | None
) -> None:
    """Note again which of the two changed tables hold a repeat meeting."""
    for t in (a, b):
        if t is None:
            continue
        now = any(own[x] for x in tables[t])
        if now != _is_hot(hot, t):
            if now:
                insort(hot, t)
            else:
                hot.remove(t)


def _swap_tables(
    group: list[int],
    other: list[int],
    towards: list[int],
    own: dict[int, int],
    met: list[list[int]],
) -> bool:
    """Swap bots of ``group`` and ``other`` while that lowers the two bots' meetings.

    ``towards[y]`` is how often bot ``y`` met the bots of ``group``; kept up to date here.
    """
    swapped = False
    for i in range(len(group)):
        x = group[i]
        row = met[x]
        keep = own[x] - sum(map(row.__getitem__, other))
        for j in range(len(other)):
            y = other[j]
            # y at x's table and x at y's: towards[y] - met[y][x] + (meetings of x with
            # other) - met[x][y], against own[x] + own[y] now.
            if towards[y] - 2 * row[y] < keep + own[y]:
                group[i], other[j] = y, x
                x, swapped = y, True
                _recount(group, own, met)
                _recount(other, own, met)
                towards[:] = _meetings_with(group, met)
                row = met[x]
                keep = own[x] - sum(map(row.__getitem__, other))
    return swapped


def _swap_bench(
    group: list[int],
    bench: list[int],
    towards: list[int],
    movable: set[int],
    own: dict[int, int],
    met: list[list[int]],
) -> bool:
    """Swap movable bots of ``group`` with benched bots while that lowers their meetings.

    A benched bot meets nobody; ``towards`` is as in :func:`_swap_tables`.
    """
    swapped = False
    for i in range(len(group)):
        x = group[i]
        if x not in movable:
            continue
        row = met[x]
        for j in range(len(bench)):
            y = bench[j]
            if towards[y] - row[y] < own[x]:
                group[i], bench[j] = y, x
                x, swapped = y, True
                _recount(group, own, met)
                towards[:] = _meetings_with(group, met)
                row = met[x]
    return swapped


def _meetings_with(group: list[int], met: list[list[int]]) -> list[int]:
    """How often each bot has met the bots of ``group`` (indexed by bot)."""
    return list(map(sum, zip(*(met[z] for z in group), strict=True)))


def _recount(table: list[int], own: dict[int, int], met: list[list[int]]) -> None:
    """Count again each bot's meetings with the rest of its table."""
    for x in table:
        own[x] = sum(met[x][y] for y in table)
