"""Heavy reads (CSV downloads, replays, large pages) are counted per address at their own rate."""

from __future__ import annotations

import pytest
from rest_framework.settings import api_settings

from tests.support.exports import fixture_tournament
from tournaments.api.throttling import DownloadRateThrottle
from tournaments.models import Match, MatchStatus

pytestmark = pytest.mark.django_db

RATE = 3


@pytest.fixture(autouse=True)
def _download_rate(monkeypatch) -> None:
    monkeypatch.setattr(DownloadRateThrottle, "THROTTLE_RATES", {"downloads": f"{RATE}/minute"})


def assert_told_to_wait(response) -> None:
    assert response.status_code == 429, response.content
    seconds = int(response["Retry-After"])
    assert 1 <= seconds <= 60
    # A CSV download is told in CSV (``code,message``), the rest in JSON.
    assert response.content.decode().startswith(("code,message\r\nthrottled,", '{"error"'))
    if response["Content-Type"].startswith("application/json"):
        assert response.json()["error"]["code"] == "throttled"


def test_the_download_after_the_rate_gets_429_with_retry_after_and_others_are_not_counted(
    client,
) -> None:
    tournament = fixture_tournament(3)
    fixtures = f"/api/tournaments/{tournament.pk}/fixtures/"
    for _ in range(RATE):
        assert client.get(fixtures, {"download": "csv"}).status_code == 200
    assert_told_to_wait(client.get(fixtures, {"download": "csv"}))
    # Every heavy read shares the count: a replay, a large page, the matches as CSV.
    replay = Match.objects.filter(tournament=tournament, status=MatchStatus.FINISHED).earliest("pk")
    assert_told_to_wait(client.get(f"/api/matches/{replay.pk}/replay/"))
    assert api_settings.PAGE_SIZE is not None
    large = api_settings.PAGE_SIZE + 1
    assert_told_to_wait(client.get("/api/matches/", {"page_size": large}))
    assert_told_to_wait(client.get("/api/matches/", HTTP_ACCEPT="text/csv"))
    # Ordinary reads are not downloads, and another address has its own count.
    assert client.get(fixtures).status_code == 200
    assert client.get("/api/matches/", {"page_size": api_settings.PAGE_SIZE}).status_code == 200
    assert client.get("/api/health/").status_code == 200
    elsewhere = client.get(fixtures, {"download": "csv"}, REMOTE_ADDR="198.51.100.7")
    assert elsewhere.status_code == 200


def test_replays_are_counted_as_downloads(client) -> None:
    tournament = fixture_tournament(1)
    url = f"/api/matches/{Match.objects.get(tournament=tournament).pk}/replay/"
    for _ in range(RATE):
        assert client.get(url).status_code == 200
    assert_told_to_wait(client.get(url))
