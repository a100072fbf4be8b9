"""Signing up and getting a token."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from tests.support.users import PASSWORD
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
