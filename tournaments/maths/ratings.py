"""TrueSkill for Oh Hell tables: parameters per variant and one free-for-all update.

Pure functions over plain numbers, so the service, the recompute and the benchmarks share
one definition; the conservative rating is defined here once for the models, selectors,
matchmaking and pages (the provisional rule reads a setting: tournaments/provisional.py).
Each seat is its own team; a shared rank is a draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from typing import Any, Protocol, TypeVar, overload

import trueskill

_R = TypeVar("_R")

DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3
# About 1% of seat pairs end a 4-player oh-hell game level on points: 0.94% between four
# equal heuristic players, 0.8% to 1.2% in graded fields of reference players (over 30,000
# games, bench/bench_ratings_quality.py --ties); most presets are 1% to 2%. British Oh Hell
# (bonus-only scoring) ties about 14% of pairs, so its preset gets its own draw probability.
DEFAULT_DRAW_PROBABILITY = 0.01
# A ladder rates up to this many of its concurrent tables (no bot at two of them) as one
# update of all their bots, ranked by points: in graded fields of 16 and 32 bots the order came
# right sooner than with every table rated alone, and sooner with rounds of 8 tables than of 4
# (bench/README.md, "Realistic fields").
ROUND_TABLES = 8
PRESET_RATING_PARAMS: dict[str, dict[str, float]] = {
    "british-oh-hell": {"draw_probability": 0.14},
}


@dataclass(frozen=True, slots=True)
class RatingParams:
    """TrueSkill parameters of one variant; the defaults are documented in docs/tournaments.md."""

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
    return _free_for_all(environment(params), _draw_margin(params), before, ranks)


@lru_cache(maxsize=64)
def _draw_margin(params: RatingParams) -> float:
    return float(trueskill.calc_draw_margin(params.draw_probability, 2, environment(params)))


def _mean(pi: float, tau: float) -> float:
    return pi and tau / pi


def _sum_message(parts: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """A sum factor's message from (coefficient, pi, tau) of each incoming division."""
    pi_inv: float = 0
    mu: float = 0
    for coeff, pi, tau in parts:
        mu += coeff * _mean(pi, tau)
        if pi_inv == math.inf:
            continue
        pi_inv = math.inf if pi == 0 else pi_inv + coeff**2 / pi
    out = 1.0 / pi_inv
    return out, out * mu


def _free_for_all(
    env: trueskill.TrueSkill,
    margin: float,
    before: Sequence[tuple[float, float]],
    ranks: Sequence[int],
) -> list[tuple[float, float]]:
    """The package's factor graph for one player per team, in plain floats.

    ``trueskill.TrueSkill.rate`` builds an object for every node and message, and a recompute
    spends most of its time there. This runs the same schedule with the same arithmetic in the
    same order (precision pi and precision-adjusted mean tau), so the results equal the
    package's bit for bit (``bench/bench_ratings_speed.py updates`` checks random tables).
    """
    order = sorted(range(len(before)), key=ranks.__getitem__)
    n, beta2, dyn = len(order), env.beta**2, env.tau
    r_pi, r_tau, p_pi, p_tau, t_pi, t_tau = [], [], [], [], [], []
    for i in order:
        # create_rating stores pi and tau; the prior reads mu and sigma back from them.
        pi0 = before[i][1] ** -2
        tau0 = pi0 * before[i][0]
        pi = math.sqrt(math.sqrt(1 / pi0) ** 2 + dyn**2) ** -2
        r_pi.append(pi)
        r_tau.append(pi * _mean(pi0, tau0))
        a = 1.0 / (1.0 + beta2 * pi)  # likelihood, down to the performance
        p_pi.append(a * pi)
        p_tau.append(a * r_tau[-1])
        pi, tau = _sum_message([(1, p_pi[-1], p_tau[-1])])  # one-term team sum, down
        t_pi.append(pi)
        t_tau.append(tau)
    s_pi, s_tau = t_pi[:], t_tau[:]  # the team sums' messages to the team performances
    ties = [ranks[order[i]] == ranks[order[i + 1]] for i in range(n - 1)]
    _Differences(env, margin, t_pi, t_tau, ties).run()
    after = []
    for i in range(n):
        pi, tau = _sum_message([(1.0, t_pi[i] - s_pi[i], t_tau[i] - s_tau[i])])
        q_pi, q_tau = p_pi[i] + pi, p_tau[i] + tau  # the performance after the sum, up
        m_pi, m_tau = q_pi - p_pi[i], q_tau - p_tau[i]
        a = 1.0 / (1.0 + beta2 * m_pi)  # likelihood, up to the rating
        pi, tau = r_pi[i] + a * m_pi, r_tau[i] + a * m_tau
        mu, sigma = _mean(pi, tau), math.sqrt(1 / pi) if pi else math.inf
        pi = sigma**-2  # the package returns Rating(mu, sigma), stored as pi and tau again
        after.append((_mean(pi, pi * mu), math.sqrt(1 / pi) if pi else math.inf))
    result: list[tuple[float, float]] = [(0.0, 0.0)] * n
    for position, i in enumerate(order):
        result[i] = after[position]
    return result


class _Differences:
    """The performance differences of neighbours in rank order, and their truncations.

    Mirrors ``trueskill.TrueSkill.run_schedule`` from the team-difference layer on: each
    message and variable is a [pi, tau] pair; updates change the team performances in place.
    """

    def __init__(
        self,
        env: trueskill.TrueSkill,
        margin: float,
        t_pi: list[float],
        t_tau: list[float],
        ties: list[bool],
    ) -> None:
        self.env, self.margin, self.t_pi, self.t_tau, self.ties = env, margin, t_pi, t_tau, ties
        k = len(ties)
        self.left = [[0.0, 0.0] for _ in range(k + 1)]  # difference i-1 -> performance i
        self.right = [[0.0, 0.0] for _ in range(k + 1)]  # difference i -> performance i
        self.d = [[0.0, 0.0] for _ in range(k)]  # the difference variables
        self.to_d = [[0.0, 0.0] for _ in range(k)]  # difference factor -> its variable
        self.trunc = [[0.0, 0.0] for _ in range(k)]  # truncation factor -> the variable

    def run(self, min_delta: float = trueskill.DELTA) -> None:
        k = len(self.ties)
        for _ in range(10):
            if k == 1:
                self.down(0)
                delta = self.truncate(0)
            else:
                delta = 0.0
                for x in range(k - 1):
                    self.down(x)
                    delta = max(delta, self.truncate(x))
                    self.up_right(x)
                for x in range(k - 1, 0, -1):
                    self.down(x)
                    delta = max(delta, self.truncate(x))
                    self.up_left(x)
            if delta <= min_delta:
                break
        self.up_left(0)
        self.up_right(k - 1)

    def _perf(self, i: int, message: list[float]) -> tuple[float, float]:
        return self.t_pi[i] - message[0], self.t_tau[i] - message[1]

    def _send(self, var: list[float], message: list[float], pi: float, tau: float) -> None:
        var[0], var[1] = var[0] - message[0] + pi, var[1] - message[1] + tau
        message[0], message[1] = pi, tau

    def down(self, i: int) -> None:
        pi, tau = _sum_message(
            [(1, *self._perf(i, self.right[i])), (-1, *self._perf(i + 1, self.left[i + 1]))]
        )
        self._send(self.d[i], self.to_d[i], pi, tau)

    def _to_perf(self, i: int, message: list[float], pi: float, tau: float) -> None:
        var = [self.t_pi[i], self.t_tau[i]]
        self._send(var, message, pi, tau)
        self.t_pi[i], self.t_tau[i] = var

    def up_right(self, i: int) -> None:
        d = self.d[i]
        pi, tau = _sum_message(
            [
                (1.0, *self._perf(i, self.right[i])),
                (-1.0, d[0] - self.to_d[i][0], d[1] - self.to_d[i][1]),
            ]
        )
        self._to_perf(i + 1, self.left[i + 1], pi, tau)

    def up_left(self, i: int) -> None:
        d = self.d[i]
        pi, tau = _sum_message(
            [
                (1.0, d[0] - self.to_d[i][0], d[1] - self.to_d[i][1]),
                (1.0, *self._perf(i + 1, self.left[i + 1])),
            ]
        )
        self._to_perf(i, self.right[i], pi, tau)

    def truncate(self, i: int) -> float:
        """Apply the win or draw truncation to difference ``i``; return how much it moved."""
        var, old = self.d[i], self.trunc[i]
        div_pi, div_tau = var[0] - old[0], var[1] - old[1]
        sqrt_pi = math.sqrt(div_pi)
        args = (div_tau / sqrt_pi, self.margin * sqrt_pi)
        if self.ties[i]:
            v, w = self.env.v_draw(*args), self.env.w_draw(*args)
        else:
            v, w = self.env.v_win(*args), self.env.w_win(*args)
        denom = 1.0 - w
        pi, tau = div_pi / denom, (div_tau + sqrt_pi * v) / denom
        self.trunc[i] = [pi + old[0] - var[0], tau + old[1] - var[1]]
        pi_delta = abs(var[0] - pi)
        delta = 0.0 if pi_delta == math.inf else max(abs(var[1] - tau), math.sqrt(pi_delta))
        var[0], var[1] = pi, tau
        return delta


def new_version_sigma(sigma: float, floor: float) -> float:
    """A bot's sigma once it is marked as a new version: raised to ``floor`` if below it."""
    return max(sigma, floor)


# How many standard deviations below mu the leaderboard ranks a bot.
CONSERVATIVE_SIGMAS = 3


class Column(Protocol[_R]):
    """A number, or a query expression such as Django's ``F("mu")``: multiplied by an int and
    subtracted from, each giving an ``_R`` (a float, or a combined expression)."""

    def __rmul__(self, other: int, /) -> _R: ...
    def __sub__(self, other: _R, /) -> _R: ...


@overload
def conservative(mu: float, sigma: float) -> float: ...
@overload
def conservative(mu: Column[_R], sigma: Column[_R]) -> _R: ...
def conservative(mu: Any, sigma: Any) -> Any:
    """The leaderboard's rating: mu - 3 sigma, a lower bound the bot very likely exceeds.

    Works on numbers and on query expressions alike (``conservative(F("mu"), F("sigma"))``
    is the column the database stores and sorts on).
    """
    return mu - margin(sigma)


@overload
def margin(sigma: float) -> float: ...
@overload
def margin(sigma: Column[_R]) -> _R: ...
def margin(sigma: Any) -> Any:
    """Half the width of the range the bot's true skill very likely lies in: 3 sigma."""
    return CONSERVATIVE_SIGMAS * sigma


def quality(params: RatingParams, players: Sequence[tuple[float, float]]) -> float:
    """TrueSkill match quality (draw probability) of a table: higher is more even."""
    env = environment(params)
    return float(env.quality([(env.create_rating(mu, sigma),) for mu, sigma in players]))
