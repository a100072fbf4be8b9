"""Cancelling a scrimmage through the API and its page, and the confirmed address a scrimmage
needs."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.support.users import PASSWORD, client_for, make_user
from tournaments.models import Bot, Match, MatchStatus, Scrimmage

URL = "/api/scrimmages/"
PAIR = ["random", "heuristic"]

pytestmark = pytest.mark.django_db


@pytest.fixture
def mine(make_bot, owner) -> Bot:
    return make_bot(owner, name="practiser", status="active")


def ask(client: APIClient, bot: Bot, matches: int = 3) -> Any:
    body = {"bot": bot.pk, "variant": "oh-hell", "matches": matches, "reference_players": PAIR}
    return client.post(URL, body, format="json")


@pytest.fixture
def asked(owner_client, mine, oh_hell) -> Scrimmage:
    answer = ask(owner_client, mine)
    assert answer.status_code == 202
    return Scrimmage.objects.get(pk=answer.json()["id"])


def cancel(client: APIClient, scrimmage: Scrimmage) -> Any:
    return client.post(f"{URL}{scrimmage.pk}/cancel/")


def test_the_owner_cancels_a_scrimmage_and_its_open_matches_with_it(owner_client, asked) -> None:
    first = asked.matches.order_by("pk").first()
    assert first is not None
    Match.objects.filter(pk=first.pk).update(status=MatchStatus.RUNNING, claimed_by="t")
    answer = cancel(owner_client, asked)
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "cancelled"
    assert body["cancel_reason"] == "cancelled by its owner" and body["cancelled_at"]
    assert set(asked.matches.values_list("status", flat=True)) == {MatchStatus.CANCELLED}


def test_another_user_cannot_cancel_it_nor_learn_it_exists(other_client, asked) -> None:
    answer = cancel(other_client, asked)
    assert answer.status_code == 404
    assert not asked.matches.filter(status=MatchStatus.CANCELLED).exists()
    assert Scrimmage.objects.get(pk=asked.pk).cancelled_at is None


def test_staff_may_cancel_anyones(staff_client, asked) -> None:
    answer = cancel(staff_client, asked)
    assert answer.status_code == 200 and answer.json()["cancel_reason"] == "cancelled by staff"


def test_a_scrimmage_cancelled_or_played_out_is_not_cancelled_again(owner_client, asked) -> None:
    assert cancel(owner_client, asked).status_code == 200
    again = cancel(owner_client, asked)
    assert again.status_code == 409 and "cancelled already" in again.json()["error"]["message"]


def test_a_finished_scrimmage_cannot_be_cancelled(owner_client, asked) -> None:
    asked.matches.update(status=MatchStatus.FINISHED, finished_at="2026-01-01T00:00:00Z")
    answer = cancel(owner_client, asked)
    assert answer.status_code == 409 and "has finished" in answer.json()["error"]["message"]
    assert Scrimmage.objects.get(pk=asked.pk).cancelled_at is None


def test_an_account_without_a_confirmed_address_is_refused_a_scrimmage(make_bot, oh_hell) -> None:
    unconfirmed = make_user("unconfirmed", email="unconfirmed@example.org")
    bot = make_bot(unconfirmed, name="unconfirmed-bot", status="active")
    answer = ask(client_for(unconfirmed), bot)
    assert answer.status_code == 403
    assert "Confirm your email address" in answer.json()["error"]["message"]
    assert not Scrimmage.objects.exists() and not Match.objects.exists()


def test_the_scrimmage_page_has_a_button_that_cancels_it(owner, asked) -> None:
    browser = Client()
    assert browser.login(username=owner.username, password=PASSWORD)
    page = browser.get(f"/my/scrimmages/{asked.pk}/")
    assert b'id="scrimmage-cancel"' in page.content
    answer = browser.post(f"/my/scrimmages/{asked.pk}/cancel/", follow=True)
    assert answer.status_code == 200
    assert b"Cancelled: cancelled by its owner." in answer.content
    assert b'id="scrimmage-cancel"' not in answer.content
    assert set(asked.matches.values_list("status", flat=True)) == {MatchStatus.CANCELLED}
