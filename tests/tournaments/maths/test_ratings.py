"""The free-for-all TrueSkill update gives exactly the trueskill package's numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.trueskill_package import package_env
from tournaments.maths.ratings import RatingParams, conservative, quality, rate

tables = st.integers(min_value=2, max_value=8).flatmap(
    lambda n: st.tuples(
        st.lists(
            st.tuples(
                st.floats(min_value=-10, max_value=60), st.floats(min_value=0.5, max_value=9)
            ),
            min_size=n,
            max_size=n,
        ),
        st.lists(st.integers(min_value=1, max_value=n), min_size=n, max_size=n),
    )
)


@settings(max_examples=150, deadline=None)
@given(table=tables, draw=st.sampled_from([0.0, 0.01, 0.14]))
def test_rate_equals_the_package_on_random_tables_with_ties(table, draw) -> None:
    before, ranks = table
    params = RatingParams(draw_probability=draw)
    env = package_env(params)
    try:
        expected = env.rate([(env.create_rating(mu, sigma),) for mu, sigma in before], ranks=ranks)
    except ValueError:
        # Ties with no draw margin between near-equal ratings: the package cannot rate them,
        # and neither does this implementation.
        with pytest.raises(ValueError):
            rate(params, before, ranks)
        return
    got = rate(params, before, ranks)
    for (mu, sigma), (want,) in zip(got, expected, strict=True):
        assert mu == pytest.approx(want.mu, rel=1e-9, abs=1e-9)
        assert sigma == pytest.approx(want.sigma, rel=1e-9, abs=1e-9)


def test_bad_parameters_and_tables_are_refused_with_a_clear_error() -> None:
    with pytest.raises(ValueError, match="draw_probability"):
        RatingParams(draw_probability=1.0)
    with pytest.raises(ValueError, match="unknown rating parameter 'gamma'"):
        RatingParams.from_dict({"gamma": 1})
    with pytest.raises(ValueError, match="one rank per player"):
        rate(RatingParams(), [(25, 8)], [1])


def test_conservative_rating_and_match_quality() -> None:
    assert conservative(25, 25 / 3) == pytest.approx(0)
    even = quality(RatingParams(), [(25, 1), (25, 1), (25, 1)])
    uneven = quality(RatingParams(), [(40, 1), (25, 1), (10, 1)])
    assert 0 < uneven < even <= 1
