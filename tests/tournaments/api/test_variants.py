"""The variant endpoints: presets and custom variants, rules in words, creation by organisers."""

from __future__ import annotations

import pytest

from engine import PRESETS, preset
from tests.support.api import error_of
from tournaments.models import Variant

pytestmark = pytest.mark.usefixtures("presets")


def create(client, **fields):
    data = {"name": "my-variant", "base": "oh-hell", "options": {"must_trump": True}, **fields}
    return client.post("/api/variants/", data, format="json")


def test_the_list_shows_every_preset_first(anonymous_client) -> None:
    body = anonymous_client.get("/api/variants/").json()
    names = [v["name"] for v in body["results"]]
    assert body["count"] == len(PRESETS)
    assert sorted(names) == sorted(PRESETS)
    assert all(v["is_preset"] for v in body["results"])


def test_a_variant_shows_its_full_rules(anonymous_client) -> None:
    body = anonymous_client.get("/api/variants/up-and-down-the-river/").json()
    engine_variant = PRESETS["up-and-down-the-river"]
    assert body["options"] == engine_variant.to_dict()
    assert body["rules"]["rules"] == engine_variant.describe()
    assert body["rules"]["min_players"] == 4 and body["rules"]["max_players"] == 8
    assert "hook" in body["rules"]["options_help"]


def test_an_unknown_variant_is_a_json_404(anonymous_client) -> None:
    response = anonymous_client.get("/api/variants/no-such-thing/")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


@pytest.mark.parametrize("client_fixture", ["organiser_client", "staff_client"])
def test_organisers_and_staff_create_custom_variants(client_fixture, request) -> None:
    response = create(request.getfixturevalue(client_fixture), description="la podrida, really")
    assert response.status_code == 201
    variant = Variant.objects.get(name="my-variant")
    expected = preset("oh-hell", must_trump=True).with_options(name="my-variant").to_dict()
    assert variant.options == expected and response.json()["options"] == expected
    assert not variant.is_preset and variant.base == "oh-hell"
    assert variant.to_engine().must_trump is True


@pytest.mark.parametrize(
    ("client_fixture", "status"), [("owner_client", 403), ("anonymous_client", 401)]
)
def test_other_users_cannot_create_variants(client_fixture, status, request) -> None:
    response = create(request.getfixturevalue(client_fixture))
    assert response.status_code == status
    error_of(response)
    assert not Variant.objects.filter(name="my-variant").exists()


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"options": {"bogus_option": 1}}, "options.bogus_option", "bogus_option"),
        ({"options": {"hook": "sometimes"}}, "options.hook", "hook"),
        ({"options": {"hook": True, "bidding": "closed"}}, "options", "hook"),
        ({"options": {"max_cards": 40}}, "options.max_cards", "max_cards"),
        ({"options": {"min_players": 2}}, "options.min_players", "min_players"),
        ({"options": [1, 2]}, "options", "dictionary"),
        ({"options": "must_trump"}, "options", "dictionary"),
        ({"base": "no-such-preset"}, "base", "unknown preset"),
        ({"base": 7}, "base", "valid string"),
        ({"name": "Has Spaces"}, "name", "lower-case"),
        ({"name": "x" * 65}, "name", "64"),
        ({"name": None}, "name", "null"),
        ({"name": "oh-hell"}, "name", "already exists"),
        ({"description": "d" * 1001}, "description", "1000"),
    ],
)
def test_bad_variants_are_refused_naming_the_problem_and_nothing_is_written(
    organiser_client, fields, field, words
) -> None:
    before = Variant.objects.count()
    response = create(organiser_client, **fields)
    assert response.status_code in (400, 409)
    error = error_of(response)
    assert any(key.startswith(field) for key in error["detail"]), error
    assert words in error["message"], error["message"]
    assert Variant.objects.count() == before


def test_variant_names_are_unique_whatever_the_case(organiser_client) -> None:
    assert create(organiser_client, name="house-rules").status_code == 201
    response = create(organiser_client, name="house-rules", options={})
    assert response.status_code == 409


def test_the_list_filters_by_preset_and_base(organiser_client) -> None:
    create(organiser_client, name="mine-1")
    create(organiser_client, name="mine-2", base="blackout", options={})
    assert organiser_client.get("/api/variants/?is_preset=false").json()["count"] == 2
    assert organiser_client.get("/api/variants/?base=blackout").json()["count"] == 2
    names = [
        v["name"]
        for v in organiser_client.get("/api/variants/?ordering=-created_at").json()["results"]
    ]
    assert names[0] == "mine-2"
