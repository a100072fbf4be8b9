"""The ladder endpoints: anyone reads, staff switch ladders on, pause and resume them."""

from __future__ import annotations

import json

import pytest

from tournaments.maths.ratings import ROUND_TABLES
from tournaments.models import Ladder, LadderStatus
from tournaments.models.ladders import LADDER_DUPLICATE_HELP
from tournaments.services.ladders import ladder_ensure_default


@pytest.fixture
def ladder(oh_hell) -> Ladder:
    ladder = ladder_ensure_default()
    assert ladder is not None
    return ladder


def test_anyone_lists_and_reads_the_ladders(ladder, anonymous_client) -> None:
    body = anonymous_client.get("/api/ladders/").json()
    assert [row["variant"] for row in body["results"]] == ["oh-hell"]
    one = anonymous_client.get(f"/api/ladders/{ladder.pk}/").json()
    assert one["status"] == "running" and one["duplicate"] is False
    assert one["matches_in_flight"] == 0


def test_staff_pause_and_resume_a_ladder(ladder, staff_client) -> None:
    response = staff_client.post(f"/api/ladders/{ladder.pk}/pause/")
    assert response.status_code == 200 and response.json()["status"] == "paused"
    assert staff_client.post(f"/api/ladders/{ladder.pk}/pause/").status_code == 409
    response = staff_client.post(f"/api/ladders/{ladder.pk}/resume/")
    assert response.status_code == 200 and response.json()["status"] == "running"


def test_staff_switch_a_variant_ladder_on(presets, staff_client) -> None:
    data = {"variant": "blackout", "table_size": 5}
    response = staff_client.post("/api/ladders/", data, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["duplicate"] is False  # independent deals unless asked
    assert Ladder.objects.get(variant__name="blackout").table_size == 5
    assert response.json()["time_bank_ms"] == 10_000  # the default bank
    again = staff_client.post("/api/ladders/", data, format="json")
    assert again.status_code == 409


def test_staff_set_how_many_tables_a_round_rates_together(presets, staff_client) -> None:
    response = staff_client.post("/api/ladders/", {"variant": "blackout"}, format="json")
    assert response.json()["round_tables"] == ROUND_TABLES  # rounds by default
    data = {"variant": "british-oh-hell", "round_tables": 1}  # every table rated alone
    response = staff_client.post("/api/ladders/", data, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["round_tables"] == 1
    assert Ladder.objects.get(pk=response.json()["id"]).round_tables == 1


def test_staff_set_a_ladders_time_bank(presets, staff_client, anonymous_client) -> None:
    data = {"variant": "blackout", "time_bank_ms": 0}
    response = staff_client.post("/api/ladders/", data, format="json")
    assert response.status_code == 201, response.content
    assert Ladder.objects.get(variant__name="blackout").time_bank_ms == 0
    one = anonymous_client.get(f"/api/ladders/{response.json()['id']}/").json()
    assert one["time_bank_ms"] == 0


def test_staff_may_switch_duplicate_on_and_the_schema_says_what_it_exposes(
    presets, staff_client, anonymous_client
) -> None:
    data = {"variant": "blackout", "table_size": 4, "duplicate": True}
    response = staff_client.post("/api/ladders/", data, format="json")
    assert response.status_code == 201, response.content
    assert Ladder.objects.get(variant__name="blackout").duplicate
    schema = json.loads(anonymous_client.get("/api/schema/?format=json").content)
    components = schema["components"]["schemas"]
    for name in ("LadderInputRequest", "LadderOutput"):
        described = components[name]["properties"]["duplicate"]["description"]
        assert described == LADDER_DUPLICATE_HELP
    assert "can remember them across rotations" in LADDER_DUPLICATE_HELP
    assert "trusted" in LADDER_DUPLICATE_HELP


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"variant": "no-such"}, "variant"),
        ({"variant": "blackout", "table_size": "4"}, "table_size"),
        ({"variant": "blackout", "table_size": 9}, "table_size"),
        ({"variant": "blackout", "duplicate": "yes"}, "duplicate"),
        ({"variant": "blackout", "time_limit_ms": 5}, "time_limit_ms"),
        ({"variant": "blackout", "time_bank_ms": -1}, "time_bank_ms"),
        ({"variant": "blackout", "time_bank_ms": 120_001}, "time_bank_ms"),
        ({"variant": "blackout", "time_bank_ms": "10"}, "time_bank_ms"),
        ({"variant": "blackout", "round_tables": 0}, "round_tables"),
        ({"variant": "blackout", "round_tables": 17}, "round_tables"),
        ({"variant": "blackout", "round_tables": "4"}, "round_tables"),
    ],
)
def test_bad_input_names_the_field(presets, staff_client, data, field) -> None:
    response = staff_client.post("/api/ladders/", data, format="json")
    assert response.status_code == 400
    assert field in response.json()["error"]["detail"]


@pytest.mark.parametrize("client_fixture", ["owner_client", "organiser_client", "anonymous_client"])
def test_only_staff_change_ladders(ladder, client_fixture, request) -> None:
    client = request.getfixturevalue(client_fixture)
    assert client.post(f"/api/ladders/{ladder.pk}/pause/").status_code in (401, 403)
    response = client.post("/api/ladders/", {"variant": "blackout"}, format="json")
    assert response.status_code in (401, 403)
    ladder.refresh_from_db()
    assert ladder.status == LadderStatus.RUNNING
