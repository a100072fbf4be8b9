"""Entering another user's bot in a tournament needs its owner's consent (accept_invitations)."""

from __future__ import annotations

import pytest
from rest_framework.response import Response
from rest_framework.test import APIClient

from tests.support.users import client_for
from tournaments.models import Bot, BotStatus, Tournament


def create(client: APIClient, bots: list[Bot]) -> Response:
    return client.post(
        "/api/tournaments/",
        {
            "name": "invitational",
            "variant": "oh-hell",
            "format": "round_robin",
            "bots": [b.pk for b in bots],
            "table_size": 3,
        },
        format="json",
    )


@pytest.fixture
def owners_bots(make_bot, owner, presets) -> list[Bot]:
    """Three active bots of one owner who has not opted in to invitations (the default)."""
    return [make_bot(owner, name=f"shy-{i}", status=BotStatus.ACTIVE) for i in range(3)]


@pytest.mark.parametrize("client_fixture", ["organiser_client", "staff_client"])
def test_nobody_enters_another_owners_bots_without_consent(
    owners_bots, client_fixture, request
) -> None:
    response = create(request.getfixturevalue(client_fixture), owners_bots)
    assert response.status_code == 403
    error = response.data["error"]
    assert error["code"] == "permission_denied"
    assert "shy-0, shy-1, shy-2" in error["detail"]["bots"][0]
    assert "accept_invitations" in error["message"]
    assert Tournament.objects.count() == 0


def test_only_the_bots_without_consent_are_named(owners_bots, organiser_client) -> None:
    Bot.objects.filter(name="shy-1").update(accept_invitations=True)
    response = create(organiser_client, owners_bots)
    assert response.status_code == 403
    message = response.data["error"]["message"]
    assert "shy-0, shy-2" in message and "shy-1" not in message


def test_the_owner_opts_in_through_the_api_and_then_the_bots_may_be_entered(
    owners_bots, owner_client, organiser_client
) -> None:
    assert owner_client.get(f"/api/bots/{owners_bots[0].pk}/").json()["accept_invitations"] is False
    for bot in owners_bots:
        response = owner_client.patch(
            f"/api/bots/{bot.pk}/", {"accept_invitations": True}, format="json"
        )
        assert response.status_code == 200 and response.json()["accept_invitations"] is True
    assert create(organiser_client, owners_bots).status_code == 201


def test_an_organiser_enters_their_own_bots_freely(make_bot, organiser, presets) -> None:
    bots = [make_bot(organiser, status=BotStatus.ACTIVE) for _ in range(3)]
    assert create(client_for(organiser), bots).status_code == 201


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_consent_is_a_json_boolean(owners_bots, owner_client, value) -> None:
    response = owner_client.patch(
        f"/api/bots/{owners_bots[0].pk}/", {"accept_invitations": value}, format="json"
    )
    assert response.status_code == 400
    assert "accept_invitations" in response.json()["error"]["detail"]


@pytest.mark.parametrize(
    ("client_fixture", "status"), [("other_client", 403), ("staff_client", 403)]
)
def test_only_the_owner_gives_consent(owners_bots, client_fixture, status, request) -> None:
    client = request.getfixturevalue(client_fixture)
    response = client.patch(
        f"/api/bots/{owners_bots[0].pk}/", {"accept_invitations": True}, format="json"
    )
    assert response.status_code == status
    assert not Bot.objects.get(pk=owners_bots[0].pk).accept_invitations


def test_registration_may_opt_in_at_once(
    owner_client, scripted_bot_server, loopback_allowed
) -> None:
    response = owner_client.post(
        "/api/bots/",
        {
            "name": "open-bot",
            "endpoint_url": f"{scripted_bot_server}/ok",
            "accept_invitations": True,
        },
        format="json",
    )
    assert response.status_code == 201 and response.json()["accept_invitations"] is True
