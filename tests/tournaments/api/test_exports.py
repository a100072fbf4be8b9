"""Standings and matches as CSV downloads, and head-to-head keyed by bot name."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User

from tests.tournaments.dashboard.world import World, build_world
from tournaments.models import Match, MatchSeat, MatchStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> World:
    owner = User.objects.create_user(username="ada", password="a-long-test-passphrase-42")
    return build_world(owners=[owner], bots=6, finished=6, queued=2)


def read_csv(response) -> list[dict[str, str]]:
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_standings_download_as_csv_with_the_same_figures_as_the_json(client, world):
    url = f"/api/tournaments/{world.tournament.pk}/standings/"
    as_json = client.get(url).json()["standings"]
    rows = read_csv(client.get(url, {"download": "csv"}))
    assert [r["bot_name"] for r in rows] == [s["bot_name"] for s in as_json]
    for row, line in zip(rows, as_json, strict=True):
        assert int(row["place"]) == line["place"]
        assert int(row["total_score"]) == line["total_score"]
        assert "head_to_head" not in row


def test_the_tournaments_matches_download_whole_as_csv_a_row_per_seat(client, world):
    url = f"/api/tournaments/{world.tournament.pk}/fixtures/"
    rows = read_csv(client.get(url, {"download": "csv", "page_size": 1}))
    seats = MatchSeat.objects.filter(match__tournament=world.tournament)
    assert len(rows) == seats.count()  # every match, not one page
    expected = {(s.match_id, s.bot.name, s.score) for s in seats.select_related("bot")}
    shown = {
        (int(r["id"]), r["seat_bot_name"], int(r["seat_score"]) if r["seat_score"] else None)
        for r in rows
    }
    assert shown == expected


def test_the_match_list_downloads_as_csv_with_its_filters(client, world):
    rows = read_csv(client.get("/api/matches/", {"download": "csv", "status": "finished"}))
    finished = Match.objects.filter(status=MatchStatus.FINISHED)
    assert {int(r["id"]) for r in rows} == set(finished.values_list("pk", flat=True))
    by_accept = client.get("/api/matches/", HTTP_ACCEPT="text/csv")
    assert by_accept["Content-Type"].startswith("text/csv")


def test_a_missing_tournament_answers_a_csv_error_not_a_500(client, world):
    response = client.get("/api/tournaments/999999/standings/", {"download": "csv"})
    assert response.status_code == 404
    assert response.content.decode().splitlines()[0] == "code,message"


def test_head_to_head_is_keyed_by_bot_name_with_labelled_fields(client, world):
    body = client.get(f"/api/tournaments/{world.tournament.pk}/standings/").json()
    names = {s["bot_name"]: s["bot"] for s in body["standings"]}
    for line in body["standings"]:
        assert line["head_to_head"], line
        for opponent, record in line["head_to_head"].items():
            assert opponent in names and opponent != line["bot_name"]
            assert record["bot"] == names[opponent]
            assert record["matches"] == record["ahead"] + record["level"] + record["behind"]
        mirrored = body["standings"]
        for opponent, record in line["head_to_head"].items():
            theirs = next(s for s in mirrored if s["bot_name"] == opponent)
            back = theirs["head_to_head"][line["bot_name"]]
            assert (back["ahead"], back["behind"]) == (record["behind"], record["ahead"])
