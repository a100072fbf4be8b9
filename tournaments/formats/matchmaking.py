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
- **One table at a time per bot.** A bot is seated at most once per call, and the caller
  passes only bots not already playing.
- **Seats.** Each table is seated so every bot leans towards the seat positions it has used
  least (``seats`` counts), so seat positions even out over time.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from tournaments.formats.common import FixtureError, check_table_size, seat_by_history
from tournaments.rating_math import DEFAULT_SIGMA, conservative


@dataclass(frozen=True, slots=True)
class Candidate:
    """A bot free to play: its rating, whether it is provisional, and its recent play."""

    id: int
    mu: float
    sigma: float
    provisional: bool
    recent: int = 0
    seats: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class MatchmakingParams:
    """Knobs of the choice; the defaults are the ones the benchmark measures."""

    explore: float = 0.15
    sigma_weight: float = 1.0
    provisional_bonus: float = 1.0
    sigma0: float = DEFAULT_SIGMA
    window: int = 3
    behind_share: float = 0.5

    def __post_init__(self) -> None:
        if not 0 <= self.explore <= 1:
            raise ValueError("explore must be within 0..1")
        if self.sigma_weight < 0 or self.provisional_bonus < 0 or self.sigma0 <= 0:
            raise ValueError("weights must not be negative and sigma0 must be positive")
        if self.window < 0:
            raise ValueError("window must not be negative")
        if not 0 < self.behind_share <= 1:
            raise ValueError("behind_share must be within (0, 1]")


def share_weight(bot: Candidate, params: MatchmakingParams) -> float:
    """How many shares of the tables a bot is owed: more while uncertain or provisional."""
    bonus = params.provisional_bonus if bot.provisional else 0.0
    return 1.0 + params.sigma_weight * bot.sigma / params.sigma0 + bonus


def owed(bot: Candidate, params: MatchmakingParams) -> float:
    """Recent tables per share (lower: further behind); the next table's seed has the least."""
    return (bot.recent + 1) / share_weight(bot, params)


def pick_tables(
    candidates: Sequence[Candidate],
    table_size: int,
    tables: int,
    rng: random.Random,
    params: MatchmakingParams | None = None,
) -> list[tuple[int, ...]]:
    """Choose up to ``tables`` tables of ``table_size`` distinct bots each, in seat order."""
    params = params or MatchmakingParams()
    check_table_size(table_size)
    if len({bot.id for bot in candidates}) != len(candidates):
        raise FixtureError("candidates must list each bot once")
    if tables < 0:
        raise FixtureError("tables must not be negative")
    free = list(candidates)
    rng.shuffle(free)  # ties are broken at random, not by id
    free.sort(key=lambda bot: owed(bot, params))
    chosen: list[tuple[int, ...]] = []
    while len(chosen) < tables and len(free) >= table_size:
        seed, others = free[0], free[1:]
        if rng.random() < params.explore:
            opponents = rng.sample(others, table_size - 1)
        else:
            opponents = _nearest(seed, others, table_size - 1, rng, params)
        table = [seed, *opponents]
        history = {bot.id: bot.seats for bot in table}
        chosen.append(seat_by_history([bot.id for bot in table], history, rng))
        seated = {bot.id for bot in table}
        free = [bot for bot in free if bot.id not in seated]
    return chosen


def _nearest(
    seed: Candidate,
    others: list[Candidate],
    needed: int,
    rng: random.Random,
    params: MatchmakingParams,
) -> list[Candidate]:
    """Opponents near the seed's conservative rating, among the bots behind their share.

    ``others`` is in order of ``owed``; the front ``behind_share`` of it (never fewer than
    the table needs plus the window) is ranked by distance in conservative rating, and the
    opponents are drawn at random from the nearest ``needed + window``.
    """
    pool_size = max(needed + params.window, round(len(others) * params.behind_share))
    pool = others[:pool_size]
    target = conservative(seed.mu, seed.sigma)
    pool.sort(key=lambda bot: abs(conservative(bot.mu, bot.sigma) - target))
    return rng.sample(pool[: needed + params.window], needed)
