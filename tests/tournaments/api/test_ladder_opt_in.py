"""Opting a bot into the always-on ladders through the API: the owner only, JSON booleans only."""

from __future__ import annotations

import pytest

from tournaments.models import Bot

PUBLIC_URL = "https://93.184.216.34/bot"


def test_a_new_bot_is_not_on_the_ladders_until_its_owner_opts_in(bot, owner_client) -> None:
    assert owner_client.get(f"/api/bots/{bot.pk}/").json()["ladder_opt_in"] is False
    response = owner_client.patch(f"/api/bots/{bot.pk}/", {"ladder_opt_in": True}, format="json")
    assert response.status_code == 200 and response.json()["ladder_opt_in"] is True
    bot.refresh_from_db()
    assert bot.ladder_opt_in is True
    response = owner_client.patch(f"/api/bots/{bot.pk}/", {"ladder_opt_in": False}, format="json")
    assert response.json()["ladder_opt_in"] is False
    bot.refresh_from_db()
    assert bot.ladder_opt_in is False


def test_a_bot_can_be_registered_already_opted_in(owner_client) -> None:
    data = {"name": "eager", "endpoint_url": PUBLIC_URL, "ladder_opt_in": True}
    response = owner_client.post("/api/bots/", data, format="json")
    assert response.status_code == 201 and response.json()["ladder_opt_in"] is True
    assert Bot.objects.get(name="eager").ladder_opt_in is True


@pytest.mark.parametrize("client_fixture", ["other_client", "staff_client", "anonymous_client"])
def test_nobody_but_the_owner_opts_a_bot_in(bot, client_fixture, request) -> None:
    client = request.getfixturevalue(client_fixture)
    response = client.patch(f"/api/bots/{bot.pk}/", {"ladder_opt_in": True}, format="json")
    assert response.status_code in (401, 403)
    bot.refresh_from_db()
    assert bot.ladder_opt_in is False


@pytest.mark.parametrize("value", ["true", 1, None, [True], {"on": True}])
def test_only_a_json_boolean_is_accepted(bot, owner_client, value) -> None:
    response = owner_client.patch(f"/api/bots/{bot.pk}/", {"ladder_opt_in": value}, format="json")
    assert response.status_code == 400
    assert "ladder_opt_in" in response.json()["error"]["detail"]
    bot.refresh_from_db()
    assert bot.ladder_opt_in is False


def test_a_refused_change_leaves_the_opt_in_alone(bot, owner_client) -> None:
    data = {"ladder_opt_in": True, "endpoint_url": "http://169.254.169.254/"}
    response = owner_client.patch(f"/api/bots/{bot.pk}/", data, format="json")
    assert response.status_code == 400
    bot.refresh_from_db()
    assert bot.ladder_opt_in is False


def test_opting_in_one_bot_more_than_an_account_may_is_refused_naming_the_field(
    make_bot, owner, owner_client, settings
) -> None:
    settings.LADDER_MAX_BOTS_PER_OWNER = 3
    for _ in range(3):
        make_bot(owner, ladder_opt_in=True)
    fourth = make_bot(owner)
    response = owner_client.patch(f"/api/bots/{fourth.pk}/", {"ladder_opt_in": True}, format="json")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "conflict" and "ladder_opt_in" in error["detail"]
    assert "at most 3" in error["detail"]["ladder_opt_in"][0]
    fourth.refresh_from_db()
    assert fourth.ladder_opt_in is False
    data = {"name": "one-too-many", "endpoint_url": PUBLIC_URL, "ladder_opt_in": True}
    response = owner_client.post("/api/bots/", data, format="json")
    assert response.status_code == 409 and "ladder_opt_in" in response.json()["error"]["detail"]
    assert not Bot.objects.filter(name="one-too-many").exists()  # the registration is undone


def test_another_owners_bots_do_not_count_against_the_cap(
    make_bot, owner, other_user, owner_client, settings
) -> None:
    settings.LADDER_MAX_BOTS_PER_OWNER = 1
    make_bot(other_user, ladder_opt_in=True)
    mine = make_bot(owner)
    response = owner_client.patch(f"/api/bots/{mine.pk}/", {"ladder_opt_in": True}, format="json")
    assert response.status_code == 200 and response.json()["ladder_opt_in"] is True
