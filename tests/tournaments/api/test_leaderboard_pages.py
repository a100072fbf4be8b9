"""The leaderboard API a page at a time: index order at any depth, cached pages kept current."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from tournaments.models import Match, MatchSeat, MatchStatus, Rating
from tournaments.services.ratings import ratings_apply_pending

pytestmark = pytest.mark.django_db

BOARD = "/api/leaderboard/?variant=oh-hell"


@pytest.fixture
def board(make_bot, owner, oh_hell):
    """Twelve rated bots, two of them level (the earlier registered ranks first)."""
    bots = [make_bot(owner, status="active") for _ in range(12)]
    for i, bot in enumerate(bots):
        mu = 20.0 + i if i != 5 else 20.0 + 4  # bots 4 and 5 level
        Rating.objects.create(bot=bot, variant=oh_hell, mu=mu, sigma=2.0, matches=i)
    return bots


def _play(variant, bots, scores) -> None:
    match = Match.objects.create(
        variant=variant, status=MatchStatus.FINISHED, finished_at=timezone.now()
    )
    for seat, (bot, score) in enumerate(zip(bots, scores, strict=True)):
        MatchSeat.objects.create(match=match, seat=seat, bot=bot, score=score)


def test_pages_follow_the_whole_board_in_order_with_ranks_from_the_top(
    anonymous_client, board
) -> None:
    rows = []
    for page in (1, 2, 3):
        body = anonymous_client.get(f"{BOARD}&page_size=5&page={page}").json()
        assert body["count"] == 12
        rows += body["results"]
    assert [r["rank"] for r in rows] == list(range(1, 13))
    expected = sorted(board, key=lambda b: (-b.ratings.get().conservative, b.pk))
    assert [r["bot"] for r in rows] == [b.pk for b in expected]
    level = [r["bot"] for r in rows if r["conservative"] == 24.0 - 6.0]
    assert level == sorted(level) and len(level) == 2


def test_a_cached_page_is_replaced_as_soon_as_a_rating_is_written(
    anonymous_client, board, oh_hell, settings, django_capture_on_commit_callbacks
) -> None:
    settings.LEADERBOARD_CACHE_SECONDS = 3600
    first = anonymous_client.get(f"{BOARD}&page_size=3").json()
    again = anonymous_client.get(f"{BOARD}&page_size=3")
    assert again.json() == first and again["Content-Type"] == "application/json"
    bottom = board[:3]  # the three lowest rated bots win big against the top
    _play(oh_hell, [*bottom, board[-1]], [90, 80, 70, 0])
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_apply_pending() == 1
    after = anonymous_client.get(f"{BOARD}&page_size=3").json()
    assert after != first
    assert board[-1].pk in [r["bot"] for r in first["results"]]
    for row in after["results"]:
        rating = Rating.objects.get(bot_id=row["bot"])
        assert (row["mu"], row["sigma"]) == (rating.mu, rating.sigma)


def test_within_the_stale_window_a_write_leaves_the_last_page_served_without_a_query(
    anonymous_client,
    board,
    oh_hell,
    settings,
    django_capture_on_commit_callbacks,
    django_assert_num_queries,
) -> None:
    settings.LEADERBOARD_CACHE_SECONDS = 3600
    first = anonymous_client.get(f"{BOARD}&page_size=3").json()  # built from this board
    settings.LEADERBOARD_STALE_SECONDS = 3600
    _play(oh_hell, [*board[:3], board[-1]], [90, 80, 70, 0])
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_apply_pending() == 1  # drops the variant's generation
    with django_assert_num_queries(0):
        again = anonymous_client.get(f"{BOARD}&page_size=3")
    assert again.json() == first


def test_a_write_shows_on_the_page_once_the_stale_window_has_passed(
    anonymous_client, board, oh_hell, settings, django_capture_on_commit_callbacks
) -> None:
    settings.LEADERBOARD_CACHE_SECONDS = 3600
    first = anonymous_client.get(f"{BOARD}&page_size=3").json()
    settings.LEADERBOARD_STALE_SECONDS = 1
    _play(oh_hell, [*board[:3], board[-1]], [90, 80, 70, 0])
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_apply_pending() == 1
    deadline = time.monotonic() + 30
    while (after := anonymous_client.get(f"{BOARD}&page_size=3").json()) == first:
        assert time.monotonic() < deadline, "the page still showed the old ratings after 30 s"
        time.sleep(0.1)
    for row in after["results"]:
        rating = Rating.objects.get(bot_id=row["bot"])
        assert (row["mu"], row["sigma"]) == (rating.mu, rating.sigma)


def test_the_page_shows_every_row_field_and_the_cache_can_be_turned_off(
    anonymous_client, board, settings
) -> None:
    settings.LEADERBOARD_CACHE_SECONDS = 0
    body = anonymous_client.get(f"{BOARD}&page_size=2&page=2").json()
    assert body["previous"] is not None and body["next"] is not None
    (row, _) = body["results"]
    assert set(row) == {
        *("rank", "bot", "bot_name", "version", "owner", "mu", "sigma"),
        *("conservative", "matches", "provisional", "updated_at"),
    }


def test_the_health_endpoint_answers_without_a_database_or_a_session(
    anonymous_client, django_assert_num_queries
) -> None:
    with django_assert_num_queries(0):
        response = anonymous_client.get("/api/health/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["version"]


@pytest.mark.parametrize("provisional", ["true", "false"])
def test_a_board_without_ratings_is_an_empty_page_not_an_error(
    anonymous_client, oh_hell, provisional, settings
) -> None:
    settings.LEADERBOARD_CACHE_SECONDS = 0  # read from the database
    response = anonymous_client.get(f"{BOARD}&include_provisional={provisional}")
    assert response.status_code == 200, response.content
    assert response.json()["count"] == 0 and response.json()["results"] == []
