"""GET /api/staff/collusion/: the flagged pairs of a variant's latest scan, for staff only."""

from __future__ import annotations

import pytest

from tests.support.api import error_of
from tests.support.collusion import Planted, store_season
from tournaments.models import CollusionFlag
from tournaments.services.collusion import collusion_scan

pytestmark = pytest.mark.django_db
URL = "/api/staff/collusion/"


@pytest.fixture
def scanned(make_bot, owner, other_user, oh_hell, settings):
    """A season of eight bots in which the owner's bot 5 is helped by the other's bot 1."""
    settings.COLLUSION_MIN_TABLES = 20
    settings.COLLUSION_FALSE_DISCOVERY_RATE = 0.01
    bots = [make_bot(owner if i != 1 else other_user, status="active") for i in range(8)]
    store_season(oh_hell, bots, tables=700, seed=4, planted=Planted(beneficiary=5, partner=1))
    assert collusion_scan(variant_id=oh_hell.pk)
    return bots


def test_staff_see_the_flagged_pairs_and_bots_with_their_evidence(
    staff_client, scanned, oh_hell, settings
) -> None:
    response = staff_client.get(URL, {"variant": "oh-hell"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["scan"]["matches"] == 700
    assert body["scan"]["pairs_tested"] == 28
    assert body["scan"]["bots_tested"] == 8
    assert body["scan"]["min_repeat"] == settings.COLLUSION_MIN_REPEAT
    # The beneficiary first (in a field of eight, its pair's trace can flag a neighbour too).
    assert body["bot_flags"][0]["bot"] == scanned[5].pk
    assert body["bot_flags"][0]["bot_name"] == scanned[5].name
    assert body["bot_flags"][0]["adjusted_p"] <= 0.01
    assert body["scan"]["min_tables"] == 20
    assert body["scan"]["false_discovery_rate"] == 0.01
    flag = CollusionFlag.objects.get()
    [row] = body["flags"]
    assert row["beneficiary"] == scanned[5].pk
    assert row["beneficiary_name"] == scanned[5].name
    assert row["partner"] == scanned[1].pk
    assert row["partner_name"] == scanned[1].name
    assert row["tables"] == flag.tables
    for name in (
        "beneficiary_with",
        "beneficiary_without",
        "partner_with",
        "partner_without",
        "lift",
        "drop",
        "z",
        "p_value",
        "adjusted_p",
    ):
        assert row[name] == pytest.approx(getattr(flag, name))
    # By id as well as by name.
    assert staff_client.get(URL, {"variant": oh_hell.pk}).json() == body


def test_a_variant_not_scanned_yet_answers_no_scan_and_no_flags(staff_client, presets) -> None:
    response = staff_client.get(URL, {"variant": "oh-hell"})
    assert response.status_code == 200
    assert response.json() == {"scan": None, "flags": [], "bot_flags": []}


def test_nobody_but_staff_sees_the_flags(
    scanned, anonymous_client, owner_client, other_client, organiser_client
) -> None:
    # Not the beneficiary's owner, not the partner's, not an organiser, not anyone signed out.
    for client in (owner_client, other_client, organiser_client):
        response = client.get(URL, {"variant": "oh-hell"})
        assert response.status_code == 403
        assert "flags" not in response.json()
    response = anonymous_client.get(URL, {"variant": "oh-hell"})
    assert response.status_code in (401, 403)
    assert "flags" not in response.json()
    # A bad query tells a non-staff caller nothing either: refused before it is read.
    assert owner_client.get(URL, {"variant": "no-such"}).status_code == 403


def test_nothing_about_collusion_shows_on_the_owners_bot(scanned, owner_client) -> None:
    body = owner_client.get(f"/api/bots/{scanned[5].pk}/").content.decode()
    assert "collusion" not in body.lower()


@pytest.mark.parametrize(
    ("query", "words"),
    [({}, "required"), ({"variant": "no-such"}, "No variant"), ({"variant": ""}, "variant")],
)
def test_a_bad_query_is_a_400_naming_the_field(staff_client, presets, query, words) -> None:
    response = staff_client.get(URL, query)
    assert response.status_code == 400
    detail = error_of(response)["detail"]
    assert words in " ".join(detail["variant"])


def test_the_staff_user_changes_nothing_here(staff_client, scanned) -> None:
    assert staff_client.post(URL, {"variant": "oh-hell"}).status_code == 405
    assert CollusionFlag.objects.count() == 1
