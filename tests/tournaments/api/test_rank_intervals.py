"""GET /api/leaderboard/intervals/: the batch ranks of a variant's bots with their intervals."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.api import error_of
from tournaments.models import BotStatus, Match, MatchSeat, MatchStatus, RankFit, RankInterval
from tournaments.services.rank_intervals import rank_intervals_fit
from tournaments.services.ratings import ratings_apply_pending

pytestmark = pytest.mark.django_db
URL = "/api/leaderboard/intervals/"
ORDINALS = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 5: "5th"}


def _play(bots, scores, *, minute, variant):
    when = timezone.now() - timedelta(days=1) + timedelta(minutes=minute)
    match = Match.objects.create(
        variant=variant, status=MatchStatus.FINISHED, started_at=when, finished_at=when
    )
    for seat, (bot, score) in enumerate(zip(bots, scores, strict=True)):
        MatchSeat.objects.create(match=match, seat=seat, bot=bot, score=score, rank=1)


@pytest.fixture
def fitted(make_bot, owner, oh_hell, settings):
    """Four regulars over 16 rated matches (the first one best) and a newcomer with two."""
    settings.RANK_INTERVALS_RESAMPLES = 20
    regulars = [make_bot(owner, status=BotStatus.ACTIVE, name=f"regular-{i}") for i in range(4)]
    newcomer = make_bot(owner, status=BotStatus.ACTIVE, name="newcomer")
    for minute in range(16):
        order = regulars[minute % 4 :] + regulars[: minute % 4]
        scores = [40, 30, 20, 10] if minute % 3 else [10, 40, 30, 20]
        # Each table seats the regulars in turn; the best scores most whatever its seat.
        seated = sorted(order, key=lambda b: regulars.index(b))
        _play(order, [scores[seated.index(b)] for b in order], minute=minute, variant=oh_hell)
    for minute in (20, 21):
        _play([newcomer, *regulars[:2]], [50, 0, 10], minute=minute, variant=oh_hell)
    ratings_apply_pending()
    assert rank_intervals_fit(variant_id=oh_hell.pk)
    return regulars, newcomer


def test_the_intervals_list_every_fitted_bot_best_first(anonymous_client, fitted, oh_hell) -> None:
    regulars, _ = fitted
    response = anonymous_client.get(URL, {"variant": "oh-hell"})
    assert response.status_code == 200
    body = response.json()
    fit = RankFit.objects.get(variant=oh_hell)
    stored = list(RankInterval.objects.filter(fit=fit).order_by("rank", "bot_id"))
    assert body["count"] == 5
    assert [row["bot"] for row in body["results"]] == [r.bot_id for r in stored]
    assert [row["rank"] for row in body["results"]] == sorted(r.rank for r in stored)
    by_bot = {row["bot"]: row for row in body["results"]}
    for row in stored:
        answered = by_bot[row.bot_id]
        assert answered["bot_name"] == row.bot.name
        assert (answered["rank"], answered["low"], answered["high"]) == (
            row.rank,
            row.low,
            row.high,
        )
        assert answered["matches"] == row.matches
        assert answered["strength"] == pytest.approx(row.strength)
        assert answered["fitted_matches"] == 18 and answered["resamples"] == 20
        assert answered["fitted_at"].replace("Z", "+00:00") == fit.fitted_at.isoformat()
    assert by_bot[regulars[0].pk]["low"] is not None
    for answered in body["results"]:
        rank, low, high = (ORDINALS.get(answered[k]) for k in ("rank", "low", "high"))
        if answered["matches"] >= 10:
            span = low if low == high else f"{low}-{high}"
            assert answered["interval"] == f"{rank}; {span} at 90%"


def test_a_bot_with_too_few_matches_says_so_instead_of_an_interval(
    anonymous_client, fitted
) -> None:
    _, newcomer = fitted
    rows = anonymous_client.get(URL, {"variant": "oh-hell"}).json()["results"]
    (row,) = [r for r in rows if r["bot"] == newcomer.pk]
    assert row["matches"] == 2 and row["low"] is None and row["high"] is None
    assert row["interval"].endswith("; too few matches for an interval")


def test_the_intervals_page_like_any_list(anonymous_client, fitted) -> None:
    first = anonymous_client.get(URL, {"variant": "oh-hell", "page_size": 2}).json()
    second = anonymous_client.get(URL, {"variant": "oh-hell", "page_size": 2, "page": 2}).json()
    everything = anonymous_client.get(URL, {"variant": "oh-hell"}).json()["results"]
    assert first["count"] == 5 and first["next"] and len(first["results"]) == 2
    assert first["results"] + second["results"] == everything[:4]


def test_before_a_variant_is_fitted_the_list_is_empty(anonymous_client, presets) -> None:
    body = anonymous_client.get(URL, {"variant": "blackout"}).json()
    assert body["count"] == 0 and body["results"] == []


@pytest.mark.parametrize("query", [{"variant": "no-such-variant"}, {"variant": ""}, {}])
def test_a_missing_or_unknown_variant_is_a_400_naming_it(anonymous_client, presets, query) -> None:
    response = anonymous_client.get(URL, query)
    assert response.status_code == 400
    assert "variant" in error_of(response)["detail"]
