"""The list filters filter lists only, and an empty CSV download still has its header row."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from tests.support.api import draft_round_robin
from tournaments.api.csv_export import MATCH_ROW_COLUMNS
from tournaments.api.serializers.tournaments import StandingOutput
from tournaments.models import Bot, BotStatus, Match, MatchStatus, Tournament, Variant

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(organiser, make_bot, oh_hell: Variant) -> Tournament:
    bots = [make_bot(organiser, status=BotStatus.ACTIVE) for _ in range(4)]
    return draft_round_robin(organiser, oh_hell, bots, name="draft cup")


def csv_of(response: Any) -> list[list[str]]:
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    body = b"".join(response) if response.streaming else response.content
    return list(csv.reader(io.StringIO(body.decode(), newline="")))


@pytest.mark.parametrize("route", ["", "standings/", "progress/"])
@pytest.mark.parametrize("value", ["csv", "json", "swiss"])
def test_format_on_a_tournaments_own_routes_is_no_filter_and_answers_json(
    anonymous_client, draft, route, value
) -> None:
    response = anonymous_client.get(f"/api/tournaments/{draft.pk}/{route}", {"format": value})
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"


def test_a_list_filter_in_the_query_never_hides_the_object_a_route_names(
    anonymous_client, draft, organiser, make_bot, oh_hell
) -> None:
    bot = make_bot(organiser, status=BotStatus.ACTIVE)
    match = Match.objects.create(tournament=draft, variant=oh_hell)
    asked = {
        f"/api/tournaments/{draft.pk}/": {"status": "running", "format": "swiss"},
        f"/api/bots/{bot.pk}/": {"status": BotStatus.DISABLED, "name": "nothing-like-it"},
        f"/api/matches/{match.pk}/": {"status": MatchStatus.FINISHED, "tournament": draft.pk + 1},
        "/api/variants/oh-hell/": {"is_preset": "false", "base": "blackout"},
    }
    for url, query in asked.items():
        assert anonymous_client.get(url, query).status_code == 200, url


def test_the_list_filters_still_filter_the_lists(anonymous_client, draft) -> None:
    assert anonymous_client.get("/api/tournaments/", {"status": "draft"}).json()["count"] == 1
    assert anonymous_client.get("/api/tournaments/", {"status": "running"}).json()["count"] == 0
    refused = anonymous_client.get("/api/tournaments/", {"format": "csv"})
    assert refused.status_code == 400 and "format" in refused.json()["error"]["message"]
    assert Bot.objects.count() == anonymous_client.get("/api/bots/").json()["count"] == 4
    assert anonymous_client.get("/api/bots/", {"status": "disabled"}).json()["count"] == 0


def test_standings_without_a_finished_match_download_as_a_header_row(
    anonymous_client, draft
) -> None:
    url = f"/api/tournaments/{draft.pk}/standings/"
    header = [f for f in StandingOutput().fields if f != "head_to_head"]
    assert csv_of(anonymous_client.get(url, {"download": "csv"})) == [header]


def test_fixtures_and_matches_without_a_match_download_as_a_header_row(
    anonymous_client, draft
) -> None:
    fixtures = anonymous_client.get(f"/api/tournaments/{draft.pk}/fixtures/", {"download": "csv"})
    assert csv_of(fixtures) == [MATCH_ROW_COLUMNS]
    matches = anonymous_client.get("/api/matches/", {"download": "csv"})
    assert csv_of(matches) == [MATCH_ROW_COLUMNS]


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/bots/?mine=perhaps", "mine"),
        ("/api/variants/?is_preset=", "is_preset"),
        ("/api/tournaments/?format=", "format"),
        ("/api/matches/?rated=yes", "rated"),
        ("/api/matches/?download=xlsx", "download"),
        ("/api/variants/?page_size=true", "page_size"),
        ("/api/variants/?page_size=0", "page_size"),
        ("/api/leaderboard/?variant=", "variant"),
    ],
)
def test_a_query_value_that_would_be_ignored_is_refused_naming_it(
    anonymous_client, presets, url, field
) -> None:
    response = anonymous_client.get(url)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"].startswith(f"{field}:")


def test_a_bots_rating_reads_refuse_an_empty_instant_or_variant(anonymous_client, draft) -> None:
    bot = Bot.objects.first()
    assert bot is not None
    for query in ("ratings/?at=", "rating-history/?at=", "rating-history/?variant="):
        response = anonymous_client.get(f"/api/bots/{bot.pk}/{query}")
        assert response.status_code == 400, query
    assert anonymous_client.get(f"/api/bots/{bot.pk}/analytics/?variant=").status_code == 400


def test_options_on_a_download_describes_the_endpoint_instead_of_failing(
    anonymous_client, draft
) -> None:
    for route in ("standings/", "fixtures/"):
        url = f"/api/tournaments/{draft.pk}/{route}?download=csv"
        assert anonymous_client.options(url).status_code == 200


def test_a_fixtures_download_still_checks_the_page_size_it_is_given(
    anonymous_client, draft
) -> None:
    url = f"/api/tournaments/{draft.pk}/fixtures/?download=csv&page_size=-4"
    response = anonymous_client.get(url)
    assert response.status_code == 400
    assert b"page_size" in response.content
