"""Matchmaking of the always-on ladders: which free bots sit together at the next tables.

A pure function of the waiting bots, their ratings and how much they have played lately, so it
is property-tested without a database (the service in ``tournaments/services/ladders.py``
gathers the values and creates the matches).

- **Share.** Every bot is owed a share of the day's tables in proportion to its weight: one,
  plus its uncertainty (``sigma`` over the starting sigma), plus a bonus while its rating is
  provisional. So over a day every bot plays, and uncertain bots play more until their rating
  settles. The bot furthest behind its share (fewest recent tables per unit of weight) seeds
  the next table.
- **Nearest.** The seed's opponents are drawn from the bots closest to it in conservative
  rating (``mu - 3 sigma``), chosen among the bots behind their share, so tables are even, which
  is what teaches TrueSkill most. A share of tables (``explore``) instead takes opponents at
  random, so bots also meet the rest of the field (Halite's seed-and-nearest with exploration).
- **Slate.** A ladder hands the matchmaker only its free bots furthest behind their share
  (``slate``), a few times the seats it wants, so a pick costs the same at any field size; the
  seed and its nearest opponents come from the front of that order anyway.
- **One table at a time per bot.** A bot is seated at most once per call, and the caller
  passes only bots not already playing.
- **Seats.** Each table is seated so every bot leans towards the seat positions it has used
  least (``seats`` counts), so seat positions even out over time.
- **Teams.** Two bots that share a team key (``Candidate.teams``: their owner, the address their
  endpoint resolves to) never sit at one table, and a team listed in ``quota`` joins at most that
  many of the call's tables. The rule is never relaxed: a seed that cannot fill a table under it
  sits out the call, and when no seed can, the call makes fewer tables (the ladder waits).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

from tournaments.formats.common import FixtureError, check_table_size, seat_by_history
from tournaments.maths.ratings import DEFAULT_SIGMA, conservative


@dataclass(frozen=True, slots=True)
class Candidate:
    """A bot free to play: its rating, whether it is provisional, and its recent play."""

    id: int
    mu: float
    sigma: float
    provisional: bool
    recent: int = 0
    seats: tuple[int, ...] = ()
    # Bots sharing any of these keys never sit at one table.
    teams: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class MatchmakingParams:
    """Knobs of the choice; the defaults are the ones the benchmark measures."""

    explore: float = 0.15
    sigma_weight: float = 1.0
    provisional_bonus: float = 1.0
    sigma0: float = DEFAULT_SIGMA
    window: int = 3
    behind_share: float = 0.5
    # Seeds whose search for a table may fail in one call before it gives up: bounds the cost
    # of a field where few tables are possible (each failed search reads every free bot).
    max_failed_seeds: int = 50

    def __post_init__(self) -> None:
        if not 0 <= self.explore <= 1:
            raise ValueError("explore must be within 0..1")
        if self.sigma_weight < 0 or self.provisional_bonus < 0 or self.sigma0 <= 0:
            raise ValueError("weights must not be negative and sigma0 must be positive")
        if self.window < 0:
            raise ValueError("window must not be negative")
        if not 0 < self.behind_share <= 1:
            raise ValueError("behind_share must be within (0, 1]")
        if self.max_failed_seeds < 0:
            raise ValueError("max_failed_seeds must not be negative")


def share_weight(bot: Candidate, params: MatchmakingParams) -> float:
    """How many shares of the tables a bot is owed: more while uncertain or provisional."""
    return weight_of(bot.sigma, bot.provisional, params)


def weight_of(sigma: float, provisional: bool, params: MatchmakingParams) -> float:
    """``share_weight`` of a bot with this rating's sigma, provisional or not (a ladder keeps
    it with each bot's share: tournaments/services/shares.py)."""
    bonus = params.provisional_bonus if provisional else 0.0
    return 1.0 + params.sigma_weight * sigma / params.sigma0 + bonus


def owed(bot: Candidate, params: MatchmakingParams) -> float:
    """Recent tables per share (lower: further behind); the next table's seed has the least."""
    return owed_of(bot.recent, share_weight(bot, params))


def owed_of(recent: int, weight: float) -> float:
    """``owed`` of a bot with ``recent`` tables and this share weight (a ladder's slate orders
    its shares by the same sum in SQL: tournaments/selectors/ladders.py)."""
    return (recent + 1) / weight


def slate_size(table_size: int, tables: int, least: int) -> int:
    """How many of the free bots furthest behind their share a ladder hands ``pick_tables`` for
    ``tables`` tables: ``least`` (``LADDER_SLATE_BOTS``), or four times the seats if more."""
    return max(least, 4 * tables * table_size)


def slate(
    candidates: Sequence[Candidate],
    size: int,
    rng: random.Random,
    params: MatchmakingParams | None = None,
) -> list[Candidate]:
    """The ``size`` candidates furthest behind their share (least ``owed``; ties at random), in
    that order: the bots a ladder's top-up hands ``pick_tables``. The ladder reads the same
    slate from an index of its shares (``ladder_slate`` in tournaments/selectors/ladders.py;
    ties in the order each share drew when its tables last changed), so a top-up never reads
    the whole field of a large ladder."""
    params = params or MatchmakingParams()
    order = list(candidates)
    rng.shuffle(order)
    order.sort(key=lambda bot: owed(bot, params))
    return order[:size]


def pick_tables(
    candidates: Sequence[Candidate],
    table_size: int,
    tables: int,
    rng: random.Random,
    params: MatchmakingParams | None = None,
    quota: Mapping[str, int] | None = None,
) -> list[tuple[int, ...]]:
    """Choose up to ``tables`` tables of ``table_size`` distinct bots each, in seat order.

    No table seats two bots sharing a team key; a team key listed in ``quota`` joins at most
    that many of the tables (keys not listed are not limited).
    """
    params = params or MatchmakingParams()
    check_table_size(table_size)
    if len({bot.id for bot in candidates}) != len(candidates):
        raise FixtureError("candidates must list each bot once")
    if tables < 0:
        raise FixtureError("tables must not be negative")
    order = list(candidates)
    rng.shuffle(order)  # ties are broken at random, not by id
    order.sort(key=lambda bot: owed(bot, params))
    left = dict(quota or {})
    load = Counter(key for bot in order for key in bot.teams)
    gone: set[int] = set()
    chosen: list[tuple[int, ...]] = []
    failures = 0
    for index, seed in enumerate(order):
        free = len(order) - len(gone)
        if len(chosen) >= tables or free < table_size or failures > params.max_failed_seeds:
            break
        if seed.id in gone:
            continue
        table = None
        if _within_quota(seed, left) and _may_fill(seed, free, load, table_size - 1):
            others = [
                bot for bot in order[index + 1 :] if bot.id not in gone and _within_quota(bot, left)
            ]
            table = _table(seed, others, table_size - 1, rng, params)
            failures += table is None
        # A seed that found no table sits out the call: later searches have fewer bots free.
        for bot in table or [seed]:
            gone.add(bot.id)
            load.subtract(bot.teams)
        if table is not None:
            for key in chain.from_iterable(bot.teams for bot in table):
                if key in left:
                    left[key] -= 1
            history = {bot.id: bot.seats for bot in table}
            chosen.append(seat_by_history([bot.id for bot in table], history, rng))
    return chosen


def _within_quota(bot: Candidate, left: Mapping[str, int]) -> bool:
    return all(left[key] > 0 for key in bot.teams if key in left)


def _may_fill(seed: Candidate, free: int, load: Mapping[str, int], needed: int) -> bool:
    """False when too few free bots share no key with the seed (a cheap bound, no search)."""
    sharing = max((load[key] - 1 for key in seed.teams), default=0)
    return free - 1 - sharing >= needed


def _table(
    seed: Candidate,
    others: list[Candidate],
    needed: int,
    rng: random.Random,
    params: MatchmakingParams,
) -> list[Candidate] | None:
    """The seed and its opponents, or None when the team rule leaves too few."""
    if rng.random() < params.explore:
        opponents = _draw(_shuffled(others, rng), needed, 0, seed.teams, rng)
    else:
        opponents = _nearest(seed, others, needed, rng, params)
    return None if opponents is None else [seed, *opponents]


def _nearest(
    seed: Candidate,
    others: list[Candidate],
    needed: int,
    rng: random.Random,
    params: MatchmakingParams,
) -> list[Candidate] | None:
    """Opponents near the seed's conservative rating, among the bots behind their share.

    ``others`` is in order of ``owed``; the front ``behind_share`` of it (never fewer than
    the table needs plus the window) is ranked by distance in conservative rating, and the
    opponents are drawn at random from the nearest ``needed + window`` that the team rule
    allows. Only when the team rule leaves too few there are the bots further behind drawn.
    """
    pool_size = max(needed + params.window, round(len(others) * params.behind_share))
    pool = others[:pool_size]
    target = conservative(seed.mu, seed.sigma)
    pool.sort(key=lambda bot: abs(conservative(bot.mu, bot.sigma) - target))
    ranked = chain(pool, others[pool_size:])
    return _draw(ranked, needed, params.window, seed.teams, rng)


def _draw(
    ranked: Iterable[Candidate],
    needed: int,
    window: int,
    taken: frozenset[str],
    rng: random.Random,
) -> list[Candidate] | None:
    """Draw ``needed`` bots one by one, each at random among the first ``still needed +
    window`` of ``ranked`` that share no team key with the bots already drawn; None if fewer.

    Without team keys this is a uniform sample of ``needed`` from the first ``needed + window``.
    """
    source = iter(ranked)
    teams = set(taken)
    front: list[Candidate] = []
    drawn: list[Candidate] = []
    while len(drawn) < needed:
        front = [bot for bot in front if teams.isdisjoint(bot.teams)]
        wanted = needed - len(drawn) + window
        while len(front) < wanted:
            candidate = next(source, None)
            if candidate is None:
                break
            if teams.isdisjoint(candidate.teams):
                front.append(candidate)
        if not front:
            return None
        bot = front.pop(rng.randrange(len(front)))
        drawn.append(bot)
        teams.update(bot.teams)
    return drawn


def _shuffled(items: list[Candidate], rng: random.Random) -> Iterator[Candidate]:
    """Yield ``items`` in random order, shuffling only as far as it is read (Fisher-Yates)."""
    pool = list(items)
    for end in range(len(pool) - 1, -1, -1):
        pick = rng.randrange(end + 1)
        pool[pick], pool[end] = pool[end], pool[pick]
        yield pool[end]
