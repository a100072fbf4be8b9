"""Verifying bots against real HTTP servers on loopback, each misbehaving its own way."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from arena.signing import verify_signature
from tests.support.scripted_bot import ScriptedBot
from tests.support.users import client_for
from tournaments.models import BotHealthCheck, BotStatus, DisabledCause, HealthCheckStatus
from tournaments.services.bots import bot_disable, bot_verify, bot_verify_request
from tournaments.tasks import complete_health_check


@pytest.fixture
def scripted(make_bot, owner, scripted_bot_server, loopback_allowed, settings):
    """Make a bot pointed at one behaviour of the scripted server."""
    settings.BOT_HELLO_TIMEOUT_MS = 500

    def make(behaviour: str):
        return make_bot(owner, endpoint_url=f"{scripted_bot_server}/{behaviour}")

    return make


def test_a_bot_that_answers_hello_becomes_active(scripted) -> None:
    bot = scripted("ok")
    check = bot_verify(bot=bot)
    bot.refresh_from_db()
    assert check.ok and check.error_kind == "" and check.latency_ms is not None
    assert bot.status == BotStatus.ACTIVE and bot.last_verified_at >= check.at
    assert bot.consecutive_failures == 0


def test_a_passed_check_stores_the_addresses_the_endpoint_resolves_to(
    make_bot, owner, scripted_bot_server, loopback_allowed
) -> None:
    bot = make_bot(owner, endpoint_url=f"{scripted_bot_server}/ok")
    assert bot.endpoint_addresses == []
    bot_verify(bot=bot)
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE
    assert bot.endpoint_addresses == ["127.0.0.1"]  # one team with every bot on this host


@pytest.mark.parametrize(
    ("url", "addresses"),
    [
        ("http://[::ffff:192.0.2.1]:8080/", ["192.0.2.1"]),
        ("https://[2001:DB8:0:0::1]/bot", ["2001:db8::1"]),
    ],
)
def test_an_endpoints_addresses_are_spelled_one_way(url, addresses) -> None:
    from tournaments.netpolicy import endpoint_addresses

    assert endpoint_addresses(url) == addresses


def test_the_hello_is_signed_with_the_bots_secret(scripted) -> None:
    bot = scripted("ok")
    ScriptedBot.received.clear()
    bot_verify(bot=bot)
    request = ScriptedBot.received[0]  # the hello, before the signing probes sent at once
    assert json.loads(request["body"])["type"] == "hello"
    assert json.loads(request["body"])["protocol"] == "ohhell/1"
    assert verify_signature(bot.secret, request["body"], request["headers"])
    assert not verify_signature("another-secret", request["body"], request["headers"])


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        ("error", "http_status"),
        ("redirect", "redirect"),
        ("not-json", "not_json"),
        ("array", "wrong_shape"),
        ("huge", "oversize"),
        ("slow", "timeout"),
        ("trickle", "timeout"),
    ],
)
def test_a_misbehaving_bot_fails_verification_with_the_fault_named(
    scripted, behaviour, kind
) -> None:
    bot = scripted(behaviour)
    started = time.monotonic()
    check = bot_verify(bot=bot)
    assert time.monotonic() - started < 1.5, "the call must end near the time limit"
    bot.refresh_from_db()
    assert not check.ok and check.error_kind == kind and check.error_message
    assert bot.status == BotStatus.PENDING and bot.consecutive_failures == 1


def test_a_closed_port_is_a_connection_failure(make_bot, owner, loopback_allowed) -> None:
    bot = make_bot(owner, endpoint_url="http://127.0.0.1:9/")
    check = bot_verify(bot=bot)
    assert (check.ok, check.error_kind) == (False, "connection_error")


def test_loopback_is_refused_at_call_time_when_not_allowed(
    make_bot, owner, scripted_bot_server
) -> None:
    bot = make_bot(owner, endpoint_url=f"{scripted_bot_server}/ok")
    check = bot_verify(bot=bot)
    assert (check.ok, check.error_kind) == (False, "forbidden_address")
    ScriptedBot.received.clear()


def test_passing_again_re_enables_a_bot_disabled_for_failing(scripted) -> None:
    bot = scripted("ok")
    bot_disable(bot=bot, reason="failed 5 health checks", cause=DisabledCause.HEALTH)
    bot_verify(bot=bot)
    bot.refresh_from_db()
    assert (bot.status, bot.disabled_cause, bot.disabled_reason) == (BotStatus.ACTIVE, "", "")


def test_passing_does_not_re_enable_a_bot_disabled_by_staff(scripted) -> None:
    bot = scripted("ok")
    bot_disable(bot=bot, reason="cheating")
    assert bot_verify(bot=bot).ok
    bot.refresh_from_db()
    assert (bot.status, bot.disabled_reason) == (BotStatus.DISABLED, "cheating")


def test_the_owner_verifies_through_the_api_and_polls_the_queued_check(scripted, owner) -> None:
    bot = scripted("ok")
    client = client_for(owner)
    ScriptedBot.received.clear()
    response = client.post(f"/api/bots/{bot.pk}/verify/")
    assert response.status_code == 202
    pending = response.json()
    assert (pending["status"], pending["ok"]) == ("pending", None)
    poll = response["Location"]
    assert poll.endswith(f"/api/bots/{bot.pk}/health-checks/{pending['id']}/")
    assert client.get(poll).json()["status"] == "pending"
    assert ScriptedBot.received == []  # nothing called the bot while the request was answered
    # What a worker does with the queued task:
    assert complete_health_check(pending["id"]) == "ok"
    done = client.get(poll).json()
    assert (done["id"], done["status"], done["ok"]) == (pending["id"], "ok", True)
    assert done["latency_ms"] is not None
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE
    assert [c["status"] for c in client.get(f"/api/bots/{bot.pk}/health-checks/").json()] == ["ok"]
    assert complete_health_check(pending["id"]) == "done"  # a second delivery changes nothing
    assert BotHealthCheck.objects.filter(bot=bot).count() == 1


def test_asking_again_while_a_check_is_pending_answers_the_same_check(scripted, owner) -> None:
    bot = scripted("ok")
    first = bot_verify_request(bot=bot)
    again = bot_verify_request(bot=bot)
    assert again.pk == first.pk and BotHealthCheck.objects.filter(bot=bot).count() == 1


def test_a_check_pending_too_long_is_sent_again(
    scripted, settings, django_capture_on_commit_callbacks
) -> None:
    settings.BOT_VERIFY_RESEND_S = 5
    bot = scripted("ok")
    with django_capture_on_commit_callbacks() as sent:
        check = bot_verify_request(bot=bot)
        bot_verify_request(bot=bot)
    assert len(sent) == 1
    BotHealthCheck.objects.filter(pk=check.pk).update(sent_at=timezone.now() - timedelta(seconds=6))
    with django_capture_on_commit_callbacks() as resent:
        assert bot_verify_request(bot=bot).pk == check.pk
    assert len(resent) == 1


def test_a_queued_check_of_a_silent_bot_fails_as_a_timeout(scripted) -> None:
    bot = scripted("slow")
    check = bot_verify_request(bot=bot)
    assert complete_health_check(check.pk) == "failed"
    check.refresh_from_db()
    assert (check.status, check.error_kind) == (HealthCheckStatus.FAILED, "timeout")


def test_a_check_of_another_bot_is_not_found(scripted, owner) -> None:
    bot, other = scripted("ok"), scripted("ok")
    check = bot_verify_request(bot=other)
    response = client_for(owner).get(f"/api/bots/{bot.pk}/health-checks/{check.pk}/")
    assert response.status_code == 404


def test_a_registered_bot_is_verified_with_hello_once_the_registration_commits(
    owner, scripted_bot_server, loopback_allowed, django_capture_on_commit_callbacks
) -> None:
    from django.test import override_settings

    from tournaments.services.bots import bot_register

    # Run the queued task here, as with CELERY_EAGER=1 (the Celery app reads Django's settings).
    with (
        override_settings(CELERY_TASK_ALWAYS_EAGER=True),
        django_capture_on_commit_callbacks(execute=True) as callbacks,
    ):
        bot, _secret = bot_register(
            owner=owner, name="fresh-bot", endpoint_url=f"{scripted_bot_server}/ok"
        )
    assert len(callbacks) == 1
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE
    assert BotHealthCheck.objects.filter(bot=bot, ok=True).count() == 1


def test_repeated_health_failures_disable_a_bot_and_a_pass_brings_it_back(
    scripted, settings
) -> None:
    from tournaments.models import Bot
    from tournaments.services.bots import bots_check_health

    settings.HEALTH_FAILURES_TO_DISABLE = 2
    bot = scripted("ok")
    bot_verify(bot=bot)
    Bot.objects.filter(pk=bot.pk).update(endpoint_url=bot.endpoint_url.replace("/ok", "/error"))
    assert bots_check_health()["failed"] == 1
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE and bot.consecutive_failures == 1
    bots_check_health()
    bot.refresh_from_db()
    assert bot.status == BotStatus.DISABLED and bot.disabled_cause == DisabledCause.HEALTH
    assert "2 health checks" in bot.disabled_reason and "http_status" in bot.disabled_reason
    Bot.objects.filter(pk=bot.pk).update(endpoint_url=bot.endpoint_url.replace("/error", "/ok"))
    assert bots_check_health() == {"checked": 1, "ok": 1, "failed": 0}
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE and bot.disabled_reason == ""


def test_the_health_check_leaves_a_bot_disabled_by_staff_alone(scripted) -> None:
    from tournaments.services.bots import bots_check_health

    bot = scripted("ok")
    bot_verify(bot=bot)
    bot_disable(bot=bot, reason="cheating")
    assert bots_check_health()["checked"] == 0
    bot.refresh_from_db()
    assert bot.status == BotStatus.DISABLED and bot.disabled_cause == DisabledCause.ADMIN
