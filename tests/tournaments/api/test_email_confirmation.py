"""Confirming an account's email address through the API, and what the ladders make of it: a
bot of an owner without a confirmed address gets no ladder table."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from rest_framework.test import APIClient

from tests.support.users import PASSWORD, client_for, make_confirmed_user, make_user
from tournaments.models import Bot, BotStatus, ConfirmedEmail, Match, MatchSeat, MatchStatus
from tournaments.services.ladders import ladder_ensure_default, ladders_top_up

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://[^/\s]+/confirm-email/([^/\s]+)/")
PUBLIC_URL = "https://93.184.216.34/bot"
GOOD_PASSWORD = "plenty-long-pass-99"

Mailing = Callable[[Callable[[], Any]], Any]


@pytest.fixture
def mailing(settings, django_capture_on_commit_callbacks) -> Mailing:
    """Make a request whose mail task runs here, as the request's commit would send it."""
    settings.CELERY_TASK_ALWAYS_EAGER = True

    def run(request: Callable[[], Any]) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return request()

    return run


def key_mailed_to(address: str) -> str:
    """The key of the latest confirmation link mailed to ``address``."""
    (message, *_) = [m for m in reversed(mail.outbox) if m.to == [address]]
    found = LINK.search(str(message.body))
    assert found, message.body
    return found.group(1)


def confirm(key: str) -> Any:
    return APIClient().post("/api/auth/email/confirm/", {"key": key}, format="json")


def me(user: User) -> dict[str, Any]:
    return client_for(user).get("/api/auth/me/").json()


def error_of(response: Any) -> dict[str, Any]:
    return response.json()["error"]


# Signing up, confirming, asking again -------------------------------------------------------


def test_signing_up_with_an_address_mails_a_link_that_confirms_it(mailing) -> None:
    body = {"username": "ada", "password": GOOD_PASSWORD, "email": "Ada@Example.ORG"}
    response = mailing(lambda: APIClient().post("/api/auth/signup/", body, format="json"))
    assert response.status_code == 201, response.content
    user = User.objects.get(username="ada")
    assert user.email == "Ada@example.org"
    (message,) = mail.outbox
    assert message.to == ["Ada@example.org"] and "confirm" in message.subject.lower()
    assert me(user)["email_confirmed"] is False

    answer = confirm(key_mailed_to("Ada@example.org"))
    assert answer.status_code == 200, answer.content
    assert answer.json()["email_confirmed"] is True
    assert me(user) == {
        "id": user.pk,
        "username": "ada",
        "email": "Ada@example.org",
        "email_confirmed": True,
    }
    # Following the link again is harmless; asking for another is refused, naming the field.
    assert confirm(key_mailed_to("Ada@example.org")).status_code == 200
    again = client_for(user).post("/api/auth/email/resend/")
    assert again.status_code == 409 and "email" in error_of(again)["detail"]


def test_an_account_without_an_address_is_mailed_nothing_and_told_to_add_one(mailing) -> None:
    body = {"username": "nomail", "password": GOOD_PASSWORD}
    mailing(lambda: APIClient().post("/api/auth/signup/", body, format="json"))
    assert mail.outbox == []
    user = User.objects.get(username="nomail")
    response = mailing(lambda: client_for(user).post("/api/auth/email/resend/"))
    assert response.status_code == 400
    assert "email" in error_of(response)["detail"]
    assert mail.outbox == []


def test_asking_again_mails_a_new_link_and_answers_202(mailing) -> None:
    user = make_user("late", email="late@example.org")
    response = mailing(lambda: client_for(user).post("/api/auth/email/resend/"))
    assert response.status_code == 202 and response.json()["email_confirmed"] is False
    assert confirm(key_mailed_to("late@example.org")).status_code == 200
    assert me(user)["email_confirmed"] is True


def test_anonymous_callers_may_not_ask_for_a_link_or_change_an_address(anonymous_client) -> None:
    assert anonymous_client.post("/api/auth/email/resend/").status_code in (401, 403)
    body = {"email": "x@example.org", "password": PASSWORD}
    assert anonymous_client.post("/api/auth/email/", body, format="json").status_code in (401, 403)


@pytest.mark.parametrize("key", ["", "nonsense", "a" * 1001])
def test_a_key_that_is_no_link_of_this_site_is_refused_naming_the_key(key) -> None:
    response = confirm(key)
    assert response.status_code == 400
    assert "key" in error_of(response)["detail"]


def test_a_tampered_link_confirms_nothing(mailing) -> None:
    user = make_user("tamper", email="tamper@example.org")
    mailing(lambda: client_for(user).post("/api/auth/email/resend/"))
    key = key_mailed_to("tamper@example.org")
    response = confirm(key[:-2] + ("AA" if key[-2:] != "AA" else "BB"))
    assert response.status_code == 400 and "key" in error_of(response)["detail"]
    assert me(user)["email_confirmed"] is False


def test_an_expired_link_is_refused_saying_so(mailing, settings) -> None:
    user = make_user("slow", email="slow@example.org")
    mailing(lambda: client_for(user).post("/api/auth/email/resend/"))
    settings.EMAIL_CONFIRMATION_SECONDS = -1  # every link is older than that
    response = confirm(key_mailed_to("slow@example.org"))
    assert response.status_code == 400
    assert error_of(response)["code"] == "expired" and "key" in error_of(response)["detail"]
    assert me(user)["email_confirmed"] is False


# Changing the address ---------------------------------------------------------------------------


def test_a_new_address_must_be_confirmed_again_and_the_old_link_no_longer_works(mailing) -> None:
    user = make_confirmed_user("mover")
    assert me(user)["email_confirmed"] is True
    old_link_user = make_user("mover2", email="before@example.org")
    mailing(lambda: client_for(old_link_user).post("/api/auth/email/resend/"))
    old_key = key_mailed_to("before@example.org")

    body = {"email": "after@example.org", "password": PASSWORD}
    response = mailing(
        lambda: client_for(old_link_user).post("/api/auth/email/", body, format="json")
    )
    assert response.status_code == 202, response.content
    assert response.json()["email"] == "after@example.org"
    assert response.json()["email_confirmed"] is False
    refused = confirm(old_key)
    assert refused.status_code == 400 and "key" in error_of(refused)["detail"]
    assert me(old_link_user)["email_confirmed"] is False
    assert confirm(key_mailed_to("after@example.org")).status_code == 200
    assert me(old_link_user)["email_confirmed"] is True

    # A confirmed account that changes its address is unconfirmed until the new link is followed.
    body = {"email": "elsewhere@example.org", "password": PASSWORD}
    mailing(lambda: client_for(user).post("/api/auth/email/", body, format="json"))
    assert me(user)["email_confirmed"] is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "new@example.org", "password": "not-the-password"}, "password"),
        ({"email": "not an address", "password": PASSWORD}, "email"),
        ({"password": PASSWORD}, "email"),
        ({"email": "new@example.org"}, "password"),
    ],
)
def test_a_refused_change_of_address_names_the_field_and_changes_nothing(
    owner, body, field
) -> None:
    response = client_for(owner).post("/api/auth/email/", body, format="json")
    assert response.status_code == 400
    assert field in error_of(response)["detail"]
    owner.refresh_from_db()
    assert owner.email == "owner@example.org" and me(owner)["email_confirmed"] is True


def test_one_address_confirms_one_account_until_that_account_moves_on(mailing) -> None:
    first = make_user("first", email="shared@example.org")
    second = make_user("second", email="SHARED@example.org")
    for user in (first, second):
        mailing(lambda user=user: client_for(user).post("/api/auth/email/resend/"))
    assert confirm(key_mailed_to("shared@example.org")).status_code == 200
    refused = confirm(key_mailed_to("SHARED@example.org"))
    assert refused.status_code == 409 and "email" in error_of(refused)["detail"]
    assert me(second)["email_confirmed"] is False

    first.email = "first-new@example.org"  # as the admin would change it
    first.save(update_fields=["email"])
    assert confirm(key_mailed_to("SHARED@example.org")).status_code == 200
    assert me(second)["email_confirmed"] is True


@pytest.mark.parametrize(
    ("first", "others"),
    [
        (
            "mbox@example.org",
            [
                "mbox+a@example.org",
                "mbox+b@example.org",
                "MBOX+c@example.org",
                '"mbox"@example.org',
            ],
        ),
        ("mbox@gmail.com", ["m.box@gmail.com", "M.Box+z@googlemail.com", "MBox@GoogleMail.COM"]),
    ],
    ids=["sub-addresses-case-and-quotes", "dots-at-gmail"],
)
def test_one_mailbox_confirms_one_account_however_its_address_is_written(
    mailing, first, others
) -> None:
    """Every spelling signs up and gets its link; only the first mailbox's link confirms."""
    for n, address in enumerate([first, *others]):
        body = {"username": f"sybil{n}", "password": GOOD_PASSWORD, "email": address}
        signed_up = mailing(
            lambda body=body: APIClient().post("/api/auth/signup/", body, format="json")
        )
        assert signed_up.status_code == 201, signed_up.content
    assert confirm(key_mailed_to(first)).status_code == 200
    for n, address in enumerate(others, start=1):
        refused = confirm(key_mailed_to(User.objects.get(username=f"sybil{n}").email))
        assert refused.status_code == 409, address
        assert "mailbox" in str(error_of(refused)["detail"]["email"])
        assert me(User.objects.get(username=f"sybil{n}"))["email_confirmed"] is False
    assert ConfirmedEmail.objects.count() == 1


def test_another_spelling_of_a_mailbox_moved_on_from_confirms_the_new_account(mailing) -> None:
    first = make_confirmed_user("first", email="m.box+old@gmail.com")
    second = make_user("second", email="mbox@gmail.com")
    mailing(lambda: client_for(second).post("/api/auth/email/resend/"))
    assert confirm(key_mailed_to("mbox@gmail.com")).status_code == 409
    first.email = "first-new@example.org"
    first.save(update_fields=["email"])
    mailing(lambda: client_for(second).post("/api/auth/email/resend/"))
    assert confirm(key_mailed_to("mbox@gmail.com")).status_code == 200
    assert ConfirmedEmail.objects.get().user == second


def test_mails_are_throttled_per_account_and_per_client_address(mailing) -> None:
    # THROTTLE_EMAIL_RATE is 5/hour.
    alone = make_user("alone", email="alone@example.org")
    answers = [
        mailing(
            lambda: client_for(alone).post("/api/auth/email/resend/", REMOTE_ADDR="198.51.100.1")
        )
        for _ in range(6)
    ]
    assert [a.status_code for a in answers] == [202] * 5 + [429]
    assert int(answers[-1]["Retry-After"]) >= 1
    assert len([m for m in mail.outbox if m.to == ["alone@example.org"]]) == 5

    # Two accounts from one address share its count.
    one, two = (make_user(n, email=f"{n}@example.org") for n in ("one", "two"))
    codes = [
        mailing(
            lambda user=user: client_for(user).post(
                "/api/auth/email/resend/", REMOTE_ADDR="198.51.100.2"
            )
        ).status_code
        for user in (one, two, one, two, one, two)
    ]
    assert codes == [202] * 5 + [429]


# The ladders ------------------------------------------------------------------------------------


def _ladder_of_three(make_bot: Callable[..., Bot]) -> None:
    ladder_ensure_default()
    for i in range(3):
        make_bot(make_confirmed_user(f"player-{i}"), status=BotStatus.ACTIVE, ladder_opt_in=True)


def test_a_bot_of_an_unconfirmed_owner_gets_no_ladder_table_until_the_owner_confirms(
    oh_hell, make_bot, mailing
) -> None:
    _ladder_of_three(make_bot)
    newcomer = make_user("newcomer", email="newcomer@example.org")
    # Opted in before confirmation was asked of accounts (the migration keeps the choice).
    waiting = make_bot(newcomer, status=BotStatus.ACTIVE, ladder_opt_in=True)
    assert ladders_top_up() == 0
    assert not MatchSeat.objects.filter(bot=waiting).exists()

    mailing(lambda: client_for(newcomer).post("/api/auth/email/resend/"))
    assert confirm(key_mailed_to("newcomer@example.org")).status_code == 200
    assert ladders_top_up() == 1
    assert MatchSeat.objects.filter(bot=waiting, match__ladder__isnull=False).exists()


def test_a_new_address_takes_the_bots_off_the_ladder_until_it_is_confirmed(
    oh_hell, make_bot, owner, mailing, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    _ladder_of_three(make_bot)
    mine = make_bot(owner, status=BotStatus.ACTIVE, ladder_opt_in=True)
    assert ladders_top_up() == 1
    (queued,) = Match.objects.filter(ladder__isnull=False)

    body = {"email": "owner-new@example.org", "password": PASSWORD}
    assert (
        mailing(lambda: client_for(owner).post("/api/auth/email/", body, format="json")).status_code
        == 202
    )
    assert ladders_top_up() == 0
    queued.refresh_from_db()
    assert queued.status == MatchStatus.CANCELLED
    mine.refresh_from_db()
    assert mine.ladder_opt_in is True  # the choice stays; the bot waits

    assert confirm(key_mailed_to("owner-new@example.org")).status_code == 200
    assert ladders_top_up() == 1
    assert MatchSeat.objects.filter(bot=mine, match__status=MatchStatus.QUEUED).exists()


def test_opting_in_before_confirming_is_refused_saying_why_and_registering_is_not(make_bot) -> None:
    fresh = make_user("fresh", email="fresh@example.org")
    bot = make_bot(fresh)
    client = client_for(fresh)
    response = client.patch(f"/api/bots/{bot.pk}/", {"ladder_opt_in": True}, format="json")
    assert response.status_code == 403
    error = error_of(response)
    assert "ladder_opt_in" in error["detail"]
    assert "confirm your email address" in error["message"]
    bot.refresh_from_db()
    assert bot.ladder_opt_in is False

    opted = {"name": "eager", "endpoint_url": PUBLIC_URL, "ladder_opt_in": True}
    refused = client.post("/api/bots/", opted, format="json")
    assert refused.status_code == 403 and "ladder_opt_in" in error_of(refused)["detail"]
    assert not Bot.objects.filter(name="eager").exists()
    plain = client.post("/api/bots/", {"name": "plain", "endpoint_url": PUBLIC_URL}, format="json")
    assert plain.status_code == 201, plain.content


def test_the_bot_says_to_its_owner_why_it_waits_off_the_ladder(
    make_bot, other_client, mailing
) -> None:
    fresh = make_user("waiting", email="waiting@example.org")
    bot = make_bot(fresh, ladder_opt_in=True)
    mine = client_for(fresh)
    for path in (f"/api/bots/{bot.pk}/", "/api/bots/?mine=true"):
        body = mine.get(path).json()
        shown = body if "id" in body else body["results"][0]
        assert "confirm your email address" in shown["ladder_waiting"]
    assert other_client.get(f"/api/bots/{bot.pk}/").json()["ladder_waiting"] is None

    mailing(lambda: mine.post("/api/auth/email/resend/"))
    assert confirm(key_mailed_to("waiting@example.org")).status_code == 200
    assert mine.get(f"/api/bots/{bot.pk}/").json()["ladder_waiting"] is None
