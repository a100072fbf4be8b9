"""New bot versions through the API: owner only, a clear refusal of bad input, shown on boards."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tournaments.models import BotStatus, BotVersion, Match, MatchSeat, MatchStatus, RatingHistory
from tournaments.services.ratings import ratings_apply_pending

pytestmark = pytest.mark.django_db

PUBLIC_URL = "https://93.184.216.34/new-bot"  # a literal public address: no name to resolve


def url(bot) -> str:
    return f"/api/bots/{bot.pk}/new-version/"


@pytest.fixture
def rated_bot(bot, make_bot, owner, oh_hell):
    """``bot`` after one rated match against two others."""
    others = [make_bot(owner, status="active") for _ in range(2)]
    match = Match.objects.create(
        variant=oh_hell, status=MatchStatus.FINISHED, finished_at=timezone.now()
    )
    for seat, (player, score) in enumerate(zip([bot, *others], [30, 20, 10], strict=True)):
        MatchSeat.objects.create(match=match, seat=seat, bot=player, score=score)
    ratings_apply_pending()
    return bot


def test_the_owner_marks_a_new_version_and_the_boards_show_it(
    owner_client, anonymous_client, rated_bot, settings
) -> None:
    settings.RATING_VERSION_SIGMA = 7.0
    sigma = rated_bot.ratings.get().sigma
    response = owner_client.post(url(rated_bot))
    assert response.status_code == 200
    assert response.json()["version"] == 2
    ratings_apply_pending()  # what the queued rating task does
    board = anonymous_client.get("/api/leaderboard/?variant=oh-hell").json()["results"]
    row = next(r for r in board if r["bot"] == rated_bot.pk)
    assert row["version"] == 2 and row["sigma"] == max(sigma, 7.0)
    history = anonymous_client.get(f"/api/bots/{rated_bot.pk}/rating-history/").json()
    marks = [r for r in history["results"] if r["version"] is not None]
    assert [(r["match"], r["version"], r["sigma_after"]) for r in marks] == [(None, 2, 7.0)]
    assert anonymous_client.get(f"/api/bots/{rated_bot.pk}/").json()["version"] == 2
    page = anonymous_client.get("/leaderboard/oh-hell/")
    assert page.status_code == 200 and b">v2</span>" in page.content


def test_a_new_version_at_a_new_endpoint_is_verified_again(owner_client, bot) -> None:
    bot.status = BotStatus.ACTIVE
    bot.save()
    response = owner_client.post(url(bot), {"endpoint_url": PUBLIC_URL}, format="json")
    assert response.status_code == 200
    bot.refresh_from_db()
    assert (bot.version, bot.endpoint_url, bot.status) == (2, PUBLIC_URL, BotStatus.PENDING)


@pytest.mark.parametrize(
    "body", [{"endpoint_url": "javascript:alert(1)"}, {"endpoint_url": 12}, {"endpoint_url": None}]
)
def test_a_bad_endpoint_is_refused_naming_the_field_and_changes_nothing(
    owner_client, bot, body
) -> None:
    response = owner_client.post(url(bot), body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert "endpoint_url" in error["message"]
    bot.refresh_from_db()
    assert bot.version == 1 and not BotVersion.objects.exists()


@pytest.mark.parametrize(
    ("client_fixture", "status"), [("other_client", 403), ("anonymous_client", 401)]
)
def test_only_the_owner_marks_a_new_version(request, bot, client_fixture, status) -> None:
    client = request.getfixturevalue(client_fixture)
    assert client.post(url(bot)).status_code == status
    bot.refresh_from_db()
    assert bot.version == 1 and not RatingHistory.objects.exists()


def test_the_bot_list_reads_a_page_in_the_same_queries_for_2_or_20_bots(
    anonymous_client, make_bot, owner
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(2):
        make_bot(owner)
    with CaptureQueriesContext(connection) as few:
        assert len(anonymous_client.get("/api/bots/").json()["results"]) == 2
    for _ in range(18):
        make_bot(owner)
    with CaptureQueriesContext(connection) as many:
        body = anonymous_client.get("/api/bots/").json()["results"]
    assert len(body) == 20 and {row["version"] for row in body} == {1}
    assert len(many) == len(few)
