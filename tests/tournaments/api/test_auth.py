"""Signing up and getting a token."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.conftest import PASSWORD
from tests.tournaments.api.support import error_of


def test_signing_up_answers_a_token_that_works(anonymous_client):
    response = anonymous_client.post(
        "/api/auth/signup/",
        {"username": "newcomer", "password": "plenty-long-pass-99", "email": "n@example.org"},
        format="json",
    )
    assert response.status_code == 201
    token = response.json()["token"]
    assert Token.objects.get(user__username="newcomer").key == token
    anonymous_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert anonymous_client.get("/api/auth/me/").json()["username"] == "newcomer"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"password": "123"}, "password"),
        ({"password": "password"}, "password"),
        ({"password": None}, "password"),
        ({"password": 12345678901}, "password"),
        ({"username": ""}, "username"),
        ({"username": "a b"}, "username"),
        ({"username": "u" * 151}, "username"),
        ({"username": ["x"]}, "username"),
        ({"username": "OWNER"}, "username"),
        ({"email": "not-an-email"}, "email"),
    ],
)
def test_bad_sign_ups_are_refused_and_no_account_is_made(anonymous_client, owner, fields, field):
    data = {"username": "newcomer", "password": "plenty-long-pass-99", **fields}
    response = anonymous_client.post("/api/auth/signup/", data, format="json")
    assert response.status_code in (400, 409)
    assert field in error_of(response)["detail"]
    assert User.objects.count() == 1 and Token.objects.count() == 0


def test_the_token_endpoint_answers_the_same_token_each_time(anonymous_client, owner):
    data = {"username": "owner", "password": PASSWORD}
    first = anonymous_client.post("/api/auth/token/", data, format="json").json()["token"]
    second = anonymous_client.post("/api/auth/token/", data, format="json").json()["token"]
    assert first == second == Token.objects.get(user=owner).key


@pytest.mark.parametrize(
    "data",
    [
        {"username": "owner", "password": "wrong"},
        {"username": "nobody", "password": PASSWORD},
        {"username": "owner"},
        {"username": 1, "password": 2},
    ],
)
def test_wrong_credentials_get_no_token(anonymous_client, owner, data):
    response = anonymous_client.post("/api/auth/token/", data, format="json")
    assert response.status_code == 400
    error_of(response)
    assert Token.objects.count() == 0


def test_a_bad_token_is_refused_with_the_error_body(anonymous_client):
    anonymous_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = anonymous_client.get("/api/bots/")
    assert response.status_code == 401
    assert error_of(response)["code"] == "authentication_failed"


def test_sign_ups_are_throttled(anonymous_client, monkeypatch):
    from tournaments.api.throttling import WriteRateThrottle

    monkeypatch.setattr(
        WriteRateThrottle, "THROTTLE_RATES", {"auth": "2/minute", "writes": "9/minute"}
    )
    codes = [
        anonymous_client.post(
            "/api/auth/signup/",
            {"username": f"u{i}", "password": "plenty-long-pass-99"},
            format="json",
        ).status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]
    assert User.objects.count() == 2


def _signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


# The token ends with the password, and can be revoked --------------------------------------------

NEW_PASSWORD = "another-long-passphrase-77"


def _token_of(client, username: str, password: str) -> str | None:
    response = client.post(
        "/api/auth/token/", {"username": username, "password": password}, format="json"
    )
    return response.json()["token"] if response.status_code == 200 else None


def _me_status(token: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client.get("/api/auth/me/").status_code


@pytest.mark.parametrize(
    "change",
    [
        # The dashboard's page, which asks for the current password.
        lambda user: _signed_in(user).post(
            "/my/account/password/",
            {
                "old_password": PASSWORD,
                "new_password": NEW_PASSWORD,
                "new_password_again": NEW_PASSWORD,
            },
        ),
        # Any other way of saving a new password: the admin, manage.py changepassword.
        lambda user: (user.set_password(NEW_PASSWORD), user.save()),
    ],
    ids=["account-page", "set-password"],
)
def test_a_password_change_ends_the_old_token_and_the_token_endpoint_issues_a_new_one(
    anonymous_client, owner, change
):
    old = _token_of(anonymous_client, "owner", PASSWORD)
    assert old is not None and _me_status(old) == 200
    change(owner)
    assert _me_status(old) == 401
    assert _token_of(anonymous_client, "owner", PASSWORD) is None
    new = _token_of(anonymous_client, "owner", NEW_PASSWORD)
    assert new is not None and new != old
    assert _me_status(new) == 200
    assert Token.objects.get(user=owner).key == new


def test_the_admin_changing_a_password_ends_the_token(anonymous_client, owner, staff):
    old = _token_of(anonymous_client, "owner", PASSWORD)
    assert old is not None
    response = _signed_in(staff).post(
        f"/admin/auth/user/{owner.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert _me_status(old) == 401
    assert not Token.objects.filter(user=owner).exists()


def test_revoking_the_token_refuses_it_and_signing_in_issues_a_new_one(anonymous_client, owner):
    old = _token_of(anonymous_client, "owner", PASSWORD)
    assert old is not None
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {old}")
    response = client.post("/api/auth/token/revoke/")
    assert response.status_code == 204
    assert not Token.objects.filter(user=owner).exists()
    assert _me_status(old) == 401
    assert client.post("/api/auth/token/revoke/").status_code == 401
    new = _token_of(anonymous_client, "owner", PASSWORD)
    assert new is not None and new != old and _me_status(new) == 200


def test_revoking_needs_a_signed_in_caller(anonymous_client, owner_client, owner):
    assert anonymous_client.post("/api/auth/token/revoke/").status_code == 401
    assert Token.objects.filter(user=owner).exists()


def test_revoking_from_a_session_needs_the_csrf_token(owner):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(owner)
    Token.objects.create(user=owner)
    assert client.post("/api/auth/token/revoke/").status_code == 403
    assert Token.objects.filter(user=owner).exists()
