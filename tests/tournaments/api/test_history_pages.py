"""A bot's rating history a page at a time from the cache: served without a query while the
bot's history is unchanged, and read afresh as soon as a rating write or a recompute changes
it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import redis
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
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
    first = anonymous_client.get(_history(rated[0].pk))
    assert first.status_code == 200 and first.json()["count"] == 2
    with django_assert_num_queries(0):
        again = anonymous_client.get(_history(rated[0].pk))
    assert again.content == first.content and again["Content-Type"] == "application/json"
    # Another bot: read from the database, not from another's entry.
    other = anonymous_client.get(_history(rated[1].pk)).json()
    assert other["results"][0]["mu_after"] != first.json()["results"][0]["mu_after"]


@pytest.mark.parametrize(
    "params",
    ["&page_size=1", "&page=01", "&at=2030-01-01T00:00:00Z", "&page=1&page=1"],
    ids=["a-page-size", "a-page-spelt-otherwise", "an-instant", "a-parameter-twice"],
)
def test_a_page_asked_for_in_a_free_form_is_read_from_the_database_each_time(
    anonymous_client, rated, params
) -> None:
    first = anonymous_client.get(_history(rated[0].pk, params))
    assert first.status_code == 200
    with CaptureQueriesContext(connection) as queries:
        again = anonymous_client.get(_history(rated[0].pk, params))
    assert again.content == first.content and len(queries) >= 1


def test_reads_at_a_thousand_distinct_instants_leave_a_constant_number_of_cache_entries(
    anonymous_client, rated, settings, private_redis
) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": private_redis.url,
        }
    }
    server = redis.Redis.from_url(private_redis.url)
    anonymous_client.get(_history(rated[0].pk))  # the canonical page, and its generation
    kept: int = server.dbsize()  # type: ignore[assignment]  # the blocking client's answer
    assert kept >= 1
    start = datetime(2030, 1, 1, tzinfo=UTC)
    for second in range(1000):
        at = (start + timedelta(seconds=second)).isoformat().replace("+00:00", "Z")
        assert anonymous_client.get(_history(rated[0].pk, f"&at={at}")).status_code == 200
    # Nor do the leaderboard's other spellings of its first page.
    for query in ("variant=oh-hell&page=01", "variant=OH-HELL", "variant=oh-hell&page=0001"):
        assert anonymous_client.get(f"/api/leaderboard/?{query}").status_code == 200
    left: int = server.dbsize()  # type: ignore[assignment]
    assert left <= kept  # the generation may have expired meanwhile


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
