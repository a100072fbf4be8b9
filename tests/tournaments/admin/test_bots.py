"""Bots and shared hosts in the admin: staff edits go through the owners' services."""

from __future__ import annotations

import pytest

from tests.support.admin_forms import admin_url, change_form_data, form_errors
from tests.support.users import make_user
from tournaments.models import Bot, BotHealthCheck, BotStatus, SharedHost


@pytest.fixture
def deployment(settings) -> None:
    """The network policy of a deployment: no loopback endpoints."""
    settings.BOT_ALLOW_LOOPBACK = False
    settings.BOT_ALLOWED_NETWORKS = []


def _edit(admin_client, bot: Bot, **changes):
    return admin_client.post(
        admin_url(Bot, "change", bot.pk), change_form_data(admin_client, bot, **changes)
    )


@pytest.mark.parametrize(
    "endpoint", ["http://127.0.0.1:8001/play", "http://10.1.2.3/play", "http://169.254.169.254/"]
)
def test_an_admin_edit_to_a_loopback_or_private_endpoint_is_refused_in_a_deployment(
    admin_client, make_bot, owner, deployment, endpoint
) -> None:
    bot = make_bot(owner, status=BotStatus.ACTIVE)
    before = bot.endpoint_url
    response = _edit(admin_client, bot, endpoint_url=endpoint, name="renamed")
    assert response.status_code == 200
    assert "Endpoint refused" in form_errors(response)["endpoint_url"][0]
    bot.refresh_from_db()
    assert (bot.endpoint_url, bot.name, bot.status) == (before, bot.name, BotStatus.ACTIVE)
    assert bot.name != "renamed"
    assert not BotHealthCheck.objects.filter(bot=bot).exists()


def test_an_admin_edit_of_an_endpoint_sends_the_bot_back_to_verification(
    admin_client, make_bot, owner, scripted_bot_server, loopback_allowed
) -> None:
    bot = make_bot(owner, status=BotStatus.ACTIVE)
    response = _edit(admin_client, bot, endpoint_url=f"{scripted_bot_server}/ok")
    assert response.status_code == 302, form_errors(response)
    bot.refresh_from_db()
    assert (bot.endpoint_url, bot.status) == (f"{scripted_bot_server}/ok", BotStatus.PENDING)
    assert BotHealthCheck.objects.filter(bot=bot, ok__isnull=True).count() == 1


def test_an_admin_opt_in_beyond_the_owners_cap_is_refused(
    admin_client, make_bot, owner, settings
) -> None:
    settings.LADDER_MAX_BOTS_PER_OWNER = 1
    make_bot(owner, ladder_opt_in=True)
    second = make_bot(owner)
    response = _edit(admin_client, second, ladder_opt_in="on", description="new words")
    assert response.status_code == 200
    assert "at most 1 bots on the ladders" in form_errors(response)["ladder_opt_in"][0]
    second.refresh_from_db()
    assert (second.ladder_opt_in, second.description) == (False, "")


def test_an_admin_opt_in_of_an_unconfirmed_owners_bot_is_refused(admin_client, make_bot) -> None:
    bot = make_bot(make_user("unconfirmed"))
    response = _edit(admin_client, bot, ladder_opt_in="on")
    assert "confirm your email address first" in form_errors(response)["ladder_opt_in"][0]
    assert not Bot.objects.get(pk=bot.pk).ladder_opt_in


def test_staff_opt_a_bot_out_and_rename_it_in_the_admin(admin_client, make_bot, owner) -> None:
    bot = make_bot(owner, ladder_opt_in=True)
    response = _edit(admin_client, bot, ladder_opt_in=False, name="polite-name")
    assert response.status_code == 302, form_errors(response)
    bot.refresh_from_db()
    assert (bot.ladder_opt_in, bot.name) == (False, "polite-name")


def test_a_bots_status_owner_and_consents_move_only_through_the_actions_or_the_owner(
    admin_client, make_bot, owner, other_user
) -> None:
    bot = make_bot(owner, status=BotStatus.PENDING)
    form = admin_client.get(admin_url(Bot, "change", bot.pk)).context["adminform"].form
    assert set(form.fields) == {"name", "description", "endpoint_url", "ladder_opt_in"}
    response = _edit(
        admin_client, bot, status="active", owner=other_user.pk, accept_invitations="on"
    )
    assert response.status_code == 302, form_errors(response)
    bot.refresh_from_db()
    assert (bot.status, bot.owner, bot.accept_invitations) == ("pending", owner, False)


def test_bots_are_registered_by_their_owners_not_added_in_the_admin(admin_client) -> None:
    assert admin_client.get(admin_url(Bot, "add")).status_code == 403


def test_a_bot_that_never_played_is_deleted_through_the_service(
    admin_client, make_bot, owner
) -> None:
    bot = make_bot(owner)
    response = admin_client.post(admin_url(Bot, "delete", bot.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not Bot.objects.filter(pk=bot.pk).exists()


def test_a_shared_host_is_listed_changed_and_removed_through_the_service(
    admin_client, staff
) -> None:
    response = admin_client.post(admin_url(SharedHost, "add"), {"address": "192.0.2.9"})
    assert response.status_code == 302
    host = SharedHost.objects.get()
    assert host.created_by == staff
    again = admin_client.post(admin_url(SharedHost, "add"), {"address": "::ffff:192.0.2.9"})
    assert again.status_code == 200 and "address" in form_errors(again)
    response = admin_client.post(
        admin_url(SharedHost, "change", host.pk), {"address": "192.0.2.10", "note": "course"}
    )
    assert response.status_code == 302
    host.refresh_from_db()
    assert (host.address, host.note) == ("192.0.2.9", "course")
    admin_client.post(admin_url(SharedHost, "delete", host.pk), {"post": "yes"})
    assert not SharedHost.objects.exists()
