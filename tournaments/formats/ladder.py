"""Continuous ladder: pick the next table so matches keep flowing and no bot starves.

Focus: among the bots within ``focus_slack`` games of the fewest played, the one with the
widest uncertainty (sigma) gets the next table; a new or rarely played bot is therefore always
close to the front. Opponents: bots within ``max_gap`` games of the fewest played (topped up
with the least played when too few), ranked by TrueSkill match quality with the focus (a cheap
closed-form pairwise estimate narrows them to a shortlist), then the table is grown one seat
at a time by the quality of the whole table, each bot drawn at random among the best few.

Why nobody starves: every pick includes a bot near the minimum of games, and bots far ahead
are left out whenever enough others are near, so the minimum keeps rising and the spread of
games stays bounded (the property tests measure it over long runs with skewed ratings).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import trueskill

from tournaments.formats.common import FixtureError, check_table_size

DEFAULT_BETA = 25 / 6


@dataclass(frozen=True, slots=True)
class LadderBot:
    """A bot waiting on the ladder: games played so far and its TrueSkill rating."""

    id: int
    games: int
    mu: float
    sigma: float


@dataclass(frozen=True, slots=True)
class LadderParams:
    """Knobs of the ladder's choice; defaults suit the TrueSkill defaults (mu 25, sigma 25/3)."""

    beta: float = DEFAULT_BETA
    focus_slack: int = 1
    max_gap: int = 2
    shortlist: int = 16
    choices: int = 3
    drafts: int = 4


def ladder_pick(
    candidates: Sequence[LadderBot],
    table_size: int,
    rng: random.Random,
    params: LadderParams | None = None,
) -> tuple[int, ...]:
    """Choose the next ladder table, in seat order, from the bots waiting to play."""
    params = params or LadderParams()
    _check(candidates, table_size)
    focus = _focus(candidates, rng, params)
    pool = _opponent_pool(candidates, focus, table_size, rng, params)
    pool = _shortlist(focus, pool, max(params.shortlist, table_size - 1), params.beta)
    env = trueskill.TrueSkill(beta=params.beta)
    drafts = [_draft(focus, pool, table_size, rng, params) for _ in range(max(1, params.drafts))]
    table = max(drafts, key=lambda draft: _table_quality(env, draft))
    seats = [bot.id for bot in table]
    rng.shuffle(seats)
    return tuple(seats)


def _draft(
    focus: LadderBot,
    pool: list[LadderBot],
    table_size: int,
    rng: random.Random,
    params: LadderParams,
) -> list[LadderBot]:
    """Grow a table seat by seat, drawing among the few best by pairwise quality with it."""
    table, left = [focus], list(pool)
    while len(table) < table_size:
        left.sort(key=lambda bot: -sum(pair_quality(bot, b, params.beta) for b in table))
        pick = rng.choice(left[: max(1, params.choices)])
        table.append(pick)
        left.remove(pick)
    return table


def _table_quality(env: trueskill.TrueSkill, table: list[LadderBot]) -> float:
    """Return TrueSkill's match quality of a free-for-all table (each bot its own team)."""
    return env.quality([(env.create_rating(mu=bot.mu, sigma=bot.sigma),) for bot in table])


def pair_quality(a: LadderBot, b: LadderBot, beta: float = DEFAULT_BETA) -> float:
    """Return TrueSkill's 1-vs-1 match quality in closed form, cheap enough for large pools."""
    spread = 2 * beta**2 + a.sigma**2 + b.sigma**2
    return math.sqrt(2 * beta**2 / spread) * math.exp(-((a.mu - b.mu) ** 2) / (2 * spread))


def _check(candidates: Sequence[LadderBot], table_size: int) -> None:
    """Refuse a table that cannot be filled or a list naming a bot twice."""
    check_table_size(table_size)
    if len({bot.id for bot in candidates}) != len(candidates):
        raise FixtureError("candidates must list each bot once")
    if len(candidates) < table_size:
        raise FixtureError(f"{len(candidates)} candidates cannot fill a table of {table_size}")


def _focus(candidates: Sequence[LadderBot], rng: random.Random, params: LadderParams) -> LadderBot:
    """Take the widest uncertainty among the bots that have played (nearly) the least."""
    fewest = min(bot.games for bot in candidates)
    near = [bot for bot in candidates if bot.games <= fewest + params.focus_slack]
    rng.shuffle(near)
    return max(near, key=lambda bot: (bot.sigma, -bot.games))


def _opponent_pool(
    candidates: Sequence[LadderBot],
    focus: LadderBot,
    table_size: int,
    rng: random.Random,
    params: LadderParams,
) -> list[LadderBot]:
    """Keep opponents near the fewest games; top up with the least played when too few."""
    fewest = min(bot.games for bot in candidates)
    others = [bot for bot in candidates if bot.id != focus.id]
    rng.shuffle(others)
    others.sort(key=lambda bot: bot.games)
    near = [bot for bot in others if bot.games <= fewest + params.max_gap]
    return near if len(near) >= table_size - 1 else others[: table_size - 1]


def _shortlist(focus: LadderBot, pool: list[LadderBot], keep: int, beta: float) -> list[LadderBot]:
    """Narrow a large pool to the opponents of best pairwise quality with the focus."""
    if len(pool) <= keep:
        return list(pool)
    ranked = sorted(pool, key=lambda bot: -pair_quality(focus, bot, beta))
    return ranked[:keep]
