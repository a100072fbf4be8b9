"""The account pages: changing the password, resetting it by email, revoking the API token."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.support.pages import Page, signed_in
from tests.support.users import PASSWORD
from tournaments.api.throttling import WriteRateThrottle

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "another-long-passphrase-77"
LINK = re.compile(r"https?://[^/\s]+(/password-reset/[^/\s]+/[^/\s]+/)")


def _change(client: Client, old: str, new: str, again: str | None = None):
    return client.post(
        "/my/account/password/",
        {"old_password": old, "new_password": new, "new_password_again": again or new},
    )


@pytest.fixture
def ask_for_reset(settings, django_capture_on_commit_callbacks):
    """Post the reset form; the task it sends runs here, as the request's commit would run it."""
    settings.CELERY_TASK_ALWAYS_EAGER = True

    def ask(client: Client, email: str):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post("/password-reset/", {"email": email})

    return ask


# Changing the password -------------------------------------------------------------------------


def test_the_account_pages_need_a_signed_in_user(client) -> None:
    for url in ("/my/account/", "/my/account/password/"):
        assert client.get(url)["Location"].startswith(f"/signin/?next={url}")
    assert client.post("/my/account/revoke-token/")["Location"].startswith("/signin/")


def test_changing_the_password_keeps_this_session_ends_the_others_and_the_token(owner) -> None:
    Token.objects.create(user=owner)
    here, elsewhere = signed_in(owner), signed_in(owner)
    response = _change(here, PASSWORD, NEW_PASSWORD)
    assert response.status_code == 302 and response["Location"] == "/my/account/"
    owner.refresh_from_db()
    assert owner.check_password(NEW_PASSWORD)
    assert not Token.objects.filter(user=owner).exists()
    page = here.get("/my/account/")
    assert page.status_code == 200
    assert "Your password is changed and your API token revoked." in page.content.decode()
    assert elsewhere.get("/my/account/")["Location"].startswith("/signin/")


@pytest.mark.parametrize(
    ("old", "new", "again", "field"),
    [
        ("wrong-password-1", NEW_PASSWORD, NEW_PASSWORD, "old_password"),
        (PASSWORD, NEW_PASSWORD, NEW_PASSWORD + "x", "new_password_again"),
        (PASSWORD, "12345678", "12345678", "new_password"),
        (PASSWORD, "short", "short", "new_password"),
        (PASSWORD, PASSWORD, PASSWORD, "new_password"),
        ("", NEW_PASSWORD, NEW_PASSWORD, "old_password"),
    ],
)
def test_a_refused_change_names_the_field_and_changes_nothing(
    owner, old, new, again, field
) -> None:
    token = Token.objects.create(user=owner)
    response = _change(signed_in(owner), old, new, again)
    assert response.status_code == 400
    assert field in Page(response.content.decode()).errors
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)
    assert Token.objects.get(user=owner) == token


def test_guessing_the_current_password_is_throttled(owner, monkeypatch) -> None:
    monkeypatch.setattr(WriteRateThrottle, "THROTTLE_RATES", {"auth": "2/minute", "writes": "9/m"})
    client = signed_in(owner)
    codes = [_change(client, f"guess-{i}-password", NEW_PASSWORD).status_code for i in range(2)]
    assert codes == [400, 400]
    assert _change(client, PASSWORD, NEW_PASSWORD).status_code == 429
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)


# The API token -----------------------------------------------------------------------------------


def test_the_account_page_revokes_the_token(owner) -> None:
    token = Token.objects.create(user=owner)
    client = signed_in(owner)
    html = client.get("/my/account/").content.decode()
    assert 'action="/my/account/revoke-token/"' in html and "Revoke API token" in html
    assert client.get("/my/account/revoke-token/").status_code == 405
    response = client.post("/my/account/revoke-token/")
    assert response.status_code == 302
    assert not Token.objects.filter(user=owner).exists()
    html = client.get("/my/account/").content.decode()
    assert "requests with it are refused" in html and "You have no API token" in html
    api = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.get("/api/auth/me/").status_code == 401


def test_revoking_from_the_page_needs_the_csrf_token(owner) -> None:
    Token.objects.create(user=owner)
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post("/my/account/revoke-token/").status_code == 403
    assert Token.objects.filter(user=owner).exists()


# Resetting the password by email ----------------------------------------------------------------


def test_a_reset_by_email_sets_a_new_password_that_signs_in(client, owner, ask_for_reset) -> None:
    token = Token.objects.create(user=owner)
    assert 'href="/password-reset/"' in client.get("/signin/").content.decode()
    response = ask_for_reset(client, "OWNER@example.org")
    assert response.status_code == 302 and response["Location"] == "/password-reset/sent/"
    (message,) = mail.outbox
    assert message.to == ["owner@example.org"]
    link = LINK.search(str(message.body))
    assert link is not None, message.body
    form_page = client.get(link.group(1), follow=True)
    assert form_page.status_code == 200
    assert 'name="new_password1"' in form_page.content.decode()
    done = client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert done.status_code == 302 and done["Location"] == "/password-reset/done/"
    assert not Token.objects.filter(pk=token.pk).exists()
    fresh = Client()
    refused = fresh.post("/signin/", {"username": "owner", "password": PASSWORD})
    assert refused.status_code == 400
    entered = fresh.post("/signin/", {"username": "owner", "password": NEW_PASSWORD})
    assert entered.status_code == 302 and fresh.get("/my/account/").status_code == 200
    # The link works once.
    again = client.get(link.group(1), follow=True)
    assert "This link does not work" in again.content.decode()


def test_a_reset_link_refuses_a_weak_password(client, owner, ask_for_reset) -> None:
    ask_for_reset(client, "owner@example.org")
    link = LINK.search(str(mail.outbox[0].body))
    assert link is not None
    form_page = client.get(link.group(1), follow=True)
    response = client.post(
        form_page.redirect_chain[-1][0], {"new_password1": "12345678", "new_password2": "12345678"}
    )
    assert response.status_code == 200 and "new_password2" in Page(response.content.decode()).errors
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)


def test_a_reset_answers_the_same_whether_an_account_has_the_address_or_not(
    owner, ask_for_reset
) -> None:
    known = ask_for_reset(Client(), "owner@example.org")
    unknown = ask_for_reset(Client(), "nobody@example.org")
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    assert len(mail.outbox) == 1
    known_page = Client().get(known["Location"]).content.decode()
    assert "If an account has that address" in known_page


def test_a_reset_of_an_account_without_a_usable_password_or_inactive_sends_nothing(
    client, owner, ask_for_reset
) -> None:
    User.objects.create_user(username="off", email="off@example.org", is_active=False)
    User.objects.create_user(username="nopass", email="nopass@example.org")
    for email in ("off@example.org", "nopass@example.org", "not-an-address"):
        ask_for_reset(client, email)
    assert mail.outbox == []


def test_many_reset_requests_for_one_mailbox_send_at_most_the_hours_bound(
    owner, settings, ask_for_reset
) -> None:
    """Clients at many addresses, each within its throttle, ask again and again for an address
    two accounts share (in two spellings of one mailbox too): one mail a request, naming both
    accounts, and no more than PASSWORD_RESET_MAILS_PER_HOUR in all."""
    User.objects.create_user("twin", email="OWNER@example.org", password=PASSWORD)
    settings.PASSWORD_RESET_MAILS_PER_HOUR = 3
    for n in range(12):
        client = Client(REMOTE_ADDR=f"198.51.100.{n % 4 + 1}")
        address = "owner@example.org" if n % 2 else "Owner@Example.org"
        assert ask_for_reset(client, address).status_code == 302
    assert len(mail.outbox) == 3
    for message in mail.outbox:
        assert message.to == ["owner@example.org"]
        body = str(message.body)
        assert len(LINK.findall(body)) == 2 and '"owner"' in body and '"twin"' in body


def test_a_reset_mail_names_the_one_account_it_is_for(client, owner, ask_for_reset) -> None:
    ask_for_reset(client, "owner@example.org")
    (message,) = mail.outbox
    assert len(LINK.findall(str(message.body))) == 1 and '"owner"' in str(message.body)


def test_reset_requests_are_throttled(client, owner, monkeypatch, ask_for_reset) -> None:
    monkeypatch.setattr(WriteRateThrottle, "THROTTLE_RATES", {"auth": "2/minute", "writes": "9/m"})
    codes = [ask_for_reset(client, "owner@example.org").status_code for _ in range(3)]
    assert codes == [302, 302, 429]
    assert len(mail.outbox) == 2
