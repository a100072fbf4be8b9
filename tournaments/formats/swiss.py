"""Swiss rounds: tables of bots with close standing, no repeated table when avoidable.

Bots are sorted by points (ties broken by a shuffle from the seed, so the order is fair but
reproducible) and cut into consecutive tables, strongest first. A table whose exact set of bots
already played is repaired by swapping one of its bots with a bot of another table, trying the
swaps with the smallest gap in standing first, so tables stay as close in strength as possible.

When the bots do not divide into tables of ``k``: the round uses ``ceil(n / k)`` tables with
sizes as even as possible (they differ by at most one, larger tables at the top), as long as
no table falls below ``min_table`` (3, the fewest players of any variant). Otherwise the round
seats ``n // k`` full tables and the remaining bots get a bye: the lowest-standing bots that
have not had one yet (``had_bye``). Callers find the byes as the bots absent from the fixtures.

Seats are shuffled, or, given each bot's past seat counts, lean towards its least used seats.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from tournaments.formats.common import (
    MIN_TABLE,
    Fixture,
    FixtureError,
    check_table_size,
    derived_rng,
    fixture_seed,
    seat_by_history,
)

REPAIR_PASSES = 4


def swiss_table_sizes(bots: int, table_size: int, min_table: int = MIN_TABLE) -> list[int]:
    """Return the table sizes of a round, largest first; seats left over are byes."""
    check_table_size(table_size)
    if bots < min_table:
        raise FixtureError(f"{bots} bots cannot fill a table of at least {min_table}")
    tables = -(-bots // table_size)
    if bots >= tables * min_table:
        small, extra = divmod(bots, tables)
        return [small + 1] * extra + [small] * (tables - extra)
    return [table_size] * (bots // table_size)


def swiss_count(bots: int, table_size: int, rounds: int, min_table: int = MIN_TABLE) -> int:
    """Return how many matches ``rounds`` Swiss rounds play: the same tables every round."""
    return rounds * len(swiss_table_sizes(bots, table_size, min_table))


def swiss_round(
    standings: Sequence[tuple[int, float]],
    table_size: int,
    round: int,
    seed: int,
    history: Collection[frozenset[int]],
    *,
    min_table: int = MIN_TABLE,
    had_bye: Collection[int] = (),
    seat_history: Mapping[int, Sequence[int]] | None = None,
) -> list[Fixture]:
    """Form one Swiss round from the standings, avoiding tables that already played."""
    rng = derived_rng(seed, "swiss", round)
    ids = [bot for bot, _ in standings]
    if len(set(ids)) != len(ids):
        raise FixtureError("standings must list each bot once")
    order = list(standings)
    rng.shuffle(order)
    order.sort(key=lambda entry: -entry[1])
    ranked = [bot for bot, _ in order]
    sizes = swiss_table_sizes(len(ranked), table_size, min_table)
    playing = _without_byes(ranked, sum(sizes), set(had_bye))
    tables, start = [], 0
    for size in sizes:
        tables.append(playing[start : start + size])
        start += size
    _repair(tables, {bot: i for i, bot in enumerate(ranked)}, set(history))
    return [
        Fixture(
            round=round,
            table=t,
            seats=seat_by_history(table, seat_history, rng),
            seed=fixture_seed(seed, "swiss", round, t),
        )
        for t, table in enumerate(tables)
    ]


def _without_byes(ranked: list[int], seats: int, had_bye: set[int]) -> list[int]:
    """Drop the lowest-standing bots without a previous bye, then the lowest of the rest."""
    byes = len(ranked) - seats
    fresh = [bot for bot in reversed(ranked) if bot not in had_bye]
    again = [bot for bot in reversed(ranked) if bot in had_bye]
    out = set((fresh + again)[:byes])
    return [bot for bot in ranked if bot not in out]


def _repair(tables: list[list[int]], rank: dict[int, int], history: set[frozenset[int]]) -> None:
    """Swap bots between tables until no table repeats, closest standings first."""
    for _ in range(REPAIR_PASSES):
        repeats = [i for i, table in enumerate(tables) if frozenset(table) in history]
        if not repeats:
            return
        for i in repeats:
            if frozenset(tables[i]) in history:
                _swap_out(tables, i, rank, history)


def _swap_out(
    tables: list[list[int]], i: int, rank: dict[int, int], history: set[frozenset[int]]
) -> None:
    """Make table ``i`` new by one swap that leaves the other table new or unchanged in status."""
    options = []
    for j, other in enumerate(tables):
        if j == i:
            continue
        for a, b in ((a, b) for a in tables[i] for b in other):
            options.append((abs(rank[a] - rank[b]), abs(i - j), j, a, b))
    for *_, j, a, b in sorted(options):
        mine = frozenset(tables[i]) - {a} | {b}
        theirs = frozenset(tables[j]) - {b} | {a}
        if mine in history or (theirs in history and frozenset(tables[j]) not in history):
            continue
        tables[i][tables[i].index(a)] = b
        tables[j][tables[j].index(b)] = a
        return


def repeated_tables(fixtures: Sequence[Fixture], history: Collection[frozenset[int]]) -> int:
    """Count fixtures whose set of bots already played, for reports and tests."""
    seen = set(history)
    return sum(frozenset(f.seats) in seen for f in fixtures)
