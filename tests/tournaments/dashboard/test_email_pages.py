"""The pages of an account's email address: signing up with one, the mailed link's page, asking
for it again, changing the address, and what "My bots" says while it is unconfirmed."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client

from tests.support.pages import GOOD_PASSWORD, Page, signed_in
from tests.support.users import PASSWORD, make_user
from tournaments.models import is_email_confirmed

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://[^/\s]+(/confirm-email/[^/\s]+/)")
NOT_CONFIRMED = "confirm your email address"


@pytest.fixture
def mailing(settings, django_capture_on_commit_callbacks) -> Callable[[Callable[[], Any]], Any]:
    """Post a form whose mail task runs here, as the request's commit would send it."""
    settings.CELERY_TASK_ALWAYS_EAGER = True

    def run(request: Callable[[], Any]) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return request()

    return run


def link_path(address: str) -> str:
    (message, *_) = [m for m in reversed(mail.outbox) if m.to == [address]]
    found = LINK.search(str(message.body))
    assert found, message.body
    return found.group(1)


def test_signing_up_with_an_address_mails_a_link_whose_button_confirms_it(client, mailing) -> None:
    form = client.get("/signup/").content.decode()
    assert 'name="email"' in form and "ladders" in form
    body = {"username": "newcomer", "password": GOOD_PASSWORD, "email": "n@example.org"}
    response = mailing(lambda: client.post("/signup/", body, follow=True))
    assert response.status_code == 200
    assert "A link to confirm n@example.org is on its way." in response.content.decode()
    account = client.get("/my/account/").content.decode()
    assert "not confirmed" in account and "Mail the link again" in account

    path = link_path("n@example.org")
    # Opening the link (as a mail scanner may) confirms nothing; its button does, signed in or not.
    page = Client().get(path)
    assert page.status_code == 200 and "Confirm my email address" in page.content.decode()
    user = User.objects.get(username="newcomer")
    assert not is_email_confirmed(user)
    done = Client().post(path)
    assert done.status_code == 200
    assert "n@example.org" in done.content.decode() and "is confirmed" in done.content.decode()
    user.refresh_from_db()
    assert is_email_confirmed(user)
    account = client.get("/my/account/").content.decode()
    assert "confirmed" in account and "not confirmed" not in account


def test_a_link_that_is_no_good_shows_why_on_its_page(client) -> None:
    response = client.post("/confirm-email/not-a-key/")
    assert response.status_code == 400
    assert "not a confirmation link of this site" in response.content.decode()


def test_the_account_page_mails_the_link_again_and_throttles_it(mailing) -> None:
    user = make_user("late", email="late@example.org")
    client = signed_in(user)
    answers = [mailing(lambda: client.post("/my/account/email/resend/")) for _ in range(6)]
    assert [a.status_code for a in answers] == [302] * 5 + [429]
    assert int(answers[-1]["Retry-After"]) >= 1
    assert len(mail.outbox) == 5
    assert Client().post(link_path("late@example.org")).status_code == 200
    user.refresh_from_db()
    assert is_email_confirmed(user)


def test_changing_the_address_asks_for_the_password_and_a_new_confirmation(owner, mailing) -> None:
    client = signed_in(owner)
    assert "confirmed" in client.get("/my/account/").content.decode()
    wrong = client.post("/my/account/email/", {"email": "new@example.org", "password": "nope"})
    assert wrong.status_code == 400
    assert "password" in Page(wrong.content.decode()).errors
    owner.refresh_from_db()
    assert owner.email == "owner@example.org"

    body = {"email": "new@example.org", "password": PASSWORD}
    response = mailing(lambda: client.post("/my/account/email/", body))
    assert response.status_code == 302 and response["Location"] == "/my/account/"
    owner.refresh_from_db()
    assert owner.email == "new@example.org" and not is_email_confirmed(owner)
    assert "not confirmed" in client.get("/my/account/").content.decode()
    assert Client().post(link_path("new@example.org")).status_code == 200
    owner.refresh_from_db()
    assert is_email_confirmed(owner)


def test_my_bots_say_an_unconfirmed_owner_s_bots_stay_off_the_ladder(make_bot) -> None:
    user = make_user("fresh", email="fresh@example.org")
    bot = make_bot(user)
    client = signed_in(user)
    assert NOT_CONFIRMED in client.get(f"/my/bots/{bot.pk}/").content.decode()
    response = client.post(f"/my/bots/{bot.pk}/ladder/", {"enabled": "on"})
    assert response.status_code == 302
    bot.refresh_from_db()
    assert bot.ladder_opt_in is False
    waiting = make_bot(user, ladder_opt_in=True)
    assert "waiting: confirm your email address" in client.get("/my/bots/").content.decode()
    page = client.get(f"/my/bots/{waiting.pk}/").content.decode()
    assert "Opted in, but not seated at ladder tables" in page


def test_my_bots_say_nothing_of_it_to_a_confirmed_owner(bot, owner) -> None:
    client = signed_in(owner)
    assert NOT_CONFIRMED not in client.get(f"/my/bots/{bot.pk}/").content.decode()
    assert client.post(f"/my/bots/{bot.pk}/ladder/", {"enabled": "on"}).status_code == 302
    bot.refresh_from_db()
    assert bot.ladder_opt_in is True
