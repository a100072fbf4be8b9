"""A bot's rating history a page at a time from the cache: served without a query while the
bot's history is unchanged, and read afresh as soon as a rating write or a recompute changes
it."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.utils import timezone

from tests.support.api import error_of
from tournaments.cache_keys import history_generation_key
from tournaments.models import Match, MatchSeat, MatchStatus, RatingHistory
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.recompute import ratings_recompute

pytestmark = pytest.mark.django_db


def _history(bot_id: int, params: str = "") -> str:
    return f"/api/bots/{bot_id}/rating-history/?variant=oh-hell{params}"


def _play(variant, bots, scores) -> None:
    match = Match.objects.create(
        variant=variant, status=MatchStatus.FINISHED, finished_at=timezone.now()
    )
    for seat, (bot, score) in enumerate(zip(bots, scores, strict=True)):
        MatchSeat.objects.create(match=match, seat=seat, bot=bot, score=score)


@pytest.fixture
def rated(make_bot, owner, oh_hell, django_capture_on_commit_callbacks):
    """Four bots with two rated matches each."""
    bots = [make_bot(owner, status="active") for _ in range(4)]
    for scores in ([40, 30, 20, 10], [10, 20, 30, 40]):
        _play(oh_hell, bots, scores)
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_apply_pending() == 2
    return bots


def test_a_page_read_twice_is_served_the_second_time_without_a_query(
    anonymous_client, rated, django_assert_num_queries
) -> None:
    first = anonymous_client.get(_history(rated[0].pk, "&page_size=1"))
    assert first.status_code == 200 and first.json()["count"] == 2
    with django_assert_num_queries(0):
        again = anonymous_client.get(_history(rated[0].pk, "&page_size=1"))
    assert again.content == first.content and again["Content-Type"] == "application/json"
    # Another page, another bot: each read from the database, not from another's entry.
    second = anonymous_client.get(_history(rated[0].pk, "&page_size=1&page=2")).json()
    other = anonymous_client.get(_history(rated[1].pk, "&page_size=1")).json()
    assert second["results"] != first.json()["results"]
    assert other["results"][0]["mu_after"] != first.json()["results"][0]["mu_after"]


def test_a_rating_write_of_the_bot_shows_in_its_history_at_once(
    anonymous_client, rated, oh_hell, django_capture_on_commit_callbacks
) -> None:
    first = anonymous_client.get(_history(rated[0].pk)).json()
    _play(oh_hell, rated, [0, 10, 20, 90])
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_apply_pending() == 1
    after = anonymous_client.get(_history(rated[0].pk)).json()
    assert after["count"] == first["count"] + 1
    last = RatingHistory.objects.filter(bot=rated[0]).latest("sequence")
    assert after["results"][-1]["mu_after"] == last.mu_after


def test_a_recompute_that_changes_a_history_shows_at_once(
    anonymous_client, rated, oh_hell, django_capture_on_commit_callbacks
) -> None:
    first = anonymous_client.get(_history(rated[0].pk)).json()
    # A stored result corrected: the recompute rates it as it now stands.
    seat = MatchSeat.objects.filter(bot=rated[0]).earliest("match_id")
    seat.score = 0
    seat.save(update_fields=["score"])
    with django_capture_on_commit_callbacks(execute=True):
        ratings_recompute()
    after = anonymous_client.get(_history(rated[0].pk)).json()
    assert after["count"] == first["count"]
    assert after["results"] != first["results"]
    assert after["results"][-1]["mu_after"] == (
        RatingHistory.objects.filter(bot=rated[0]).latest("sequence").mu_after
    )


def test_without_the_writer_reaching_the_cache_a_page_follows_the_database_regardless(
    anonymous_client, rated, oh_hell
) -> None:
    """A rating write whose process cannot drop the generation (its callbacks never run
    here): the page is still rebuilt once the generation's short life has passed."""
    first = anonymous_client.get(_history(rated[0].pk)).json()
    _play(oh_hell, rated, [0, 10, 20, 90])
    assert ratings_apply_pending() == 1  # on-commit callbacks not run: the cache keeps it
    cache.delete(history_generation_key(rated[0].pk))  # as HISTORY_GENERATION_SECONDS would
    after = anonymous_client.get(_history(rated[0].pk)).json()
    assert after["count"] == first["count"] + 1


def test_an_unknown_bot_and_bad_input_are_not_cached(anonymous_client, rated) -> None:
    assert anonymous_client.get(_history(999_999)).status_code == 404
    assert anonymous_client.get(_history(999_999)).status_code == 404
    bad = anonymous_client.get(_history(rated[0].pk, "&at=yesterday"))
    assert bad.status_code == 400 and "at" in error_of(bad)["detail"]
    assert anonymous_client.get(_history(rated[0].pk, "&at=yesterday")).status_code == 400
