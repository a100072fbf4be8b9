"""TrueSkill for Oh Hell tables: parameters per variant and one free-for-all update.

Pure functions over plain numbers (no Django), so the service, the recompute and the
benchmarks share one definition. Each seat is its own team; a shared rank is a draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from typing import Any

import trueskill

DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3
# About 4% of seat pairs end a 4-player oh-hell game level on points (measured with the
# reference players over 2,000 games: bench/bench_ratings.py), far above TrueSkill's default.
DEFAULT_DRAW_PROBABILITY = 0.04


@dataclass(frozen=True, slots=True)
class RatingParams:
    """TrueSkill parameters of one variant; the defaults are documented in the README."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    beta: float = DEFAULT_SIGMA / 2
    tau: float = DEFAULT_SIGMA / 100
    draw_probability: float = DEFAULT_DRAW_PROBABILITY

    def __post_init__(self) -> None:
        for name in ("mu", "sigma", "beta", "tau", "draw_probability"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ValueError(f"{name} must be a number, not {value!r}")
        if self.sigma <= 0 or self.beta <= 0 or self.tau < 0:
            raise ValueError("sigma and beta must be positive and tau not negative")
        if not 0 <= self.draw_probability < 1:
            raise ValueError("draw_probability must be at least 0 and below 1")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RatingParams:
        """Build from a stored dict, ignoring nothing: unknown keys are an error."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown rating parameter {unknown[0]!r}")
        return cls(**data)

    def to_dict(self) -> dict[str, float]:
        """Return the stored form."""
        return asdict(self)


@lru_cache(maxsize=64)
def environment(params: RatingParams) -> trueskill.TrueSkill:
    """The TrueSkill environment for a parameter set (its default backend: the fastest)."""
    return trueskill.TrueSkill(
        mu=params.mu,
        sigma=params.sigma,
        beta=params.beta,
        tau=params.tau,
        draw_probability=params.draw_probability,
    )


def rate(
    params: RatingParams, before: Sequence[tuple[float, float]], ranks: Sequence[int]
) -> list[tuple[float, float]]:
    """Return (mu, sigma) after one table, given (mu, sigma) before and ranks (1 best)."""
    if len(before) != len(ranks) or len(before) < 2:
        raise ValueError("need one rank per player and at least two players")
    env = environment(params)
    groups = [(env.create_rating(mu, sigma),) for mu, sigma in before]
    after = env.rate(groups, ranks=list(ranks))
    return [(group[0].mu, group[0].sigma) for group in after]


def conservative(mu: float, sigma: float) -> float:
    """The leaderboard's rating: mu - 3 sigma, a lower bound the bot very likely exceeds."""
    return mu - 3 * sigma


def quality(params: RatingParams, players: Sequence[tuple[float, float]]) -> float:
    """TrueSkill match quality (draw probability) of a table: higher is more even."""
    env = environment(params)
    return env.quality([(env.create_rating(mu, sigma),) for mu, sigma in players])
