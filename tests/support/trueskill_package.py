"""The trueskill package itself, set up with a variant's parameters: the independent computation
the platform's own TrueSkill update (tournaments/maths/ratings.py) is checked against."""

from __future__ import annotations

import trueskill

from tournaments.maths.ratings import RatingParams


def package_env(params: RatingParams | None = None) -> trueskill.TrueSkill:
    """A trueskill environment with ``params`` (the defaults when None)."""
    params = params or RatingParams()
    return trueskill.TrueSkill(
        mu=params.mu,
        sigma=params.sigma,
        beta=params.beta,
        tau=params.tau,
        draw_probability=params.draw_probability,
    )
