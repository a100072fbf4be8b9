"""Signing up and getting a token."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.support.api import error_of
from tests.support.users import PASSWORD
from tests.support.workers import wait_for
from tournaments.models import UsernameKey
from tournaments.usernames import username_key


def test_signing_up_answers_a_token_that_works(anonymous_client) -> None:
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
def test_bad_sign_ups_are_refused_and_no_account_is_made(
    anonymous_client, owner, fields, field
) -> None:
    data = {"username": "newcomer", "password": "plenty-long-pass-99", **fields}
    response = anonymous_client.post("/api/auth/signup/", data, format="json")
    assert response.status_code in (400, 409)
    assert field in error_of(response)["detail"]
    assert User.objects.count() == 1 and Token.objects.count() == 0


def _sign_up(client, username: str):
    data = {"username": username, "password": "plenty-long-pass-99"}
    return client.post("/api/auth/signup/", data, format="json")


def test_a_name_is_stored_in_nfkc_and_its_fullwidth_form_signs_in(anonymous_client) -> None:
    response = _sign_up(anonymous_client, "\uff21lice")  # fullwidth A
    assert response.status_code == 201 and response.json()["username"] == "Alice"
    assert User.objects.get().username == "Alice"
    data = {"username": "\uff21lice", "password": "plenty-long-pass-99"}
    assert anonymous_client.post("/api/auth/token/", data, format="json").status_code == 200


@pytest.mark.parametrize(
    "lookalike",
    [
        "\uff21lice",  # fullwidth A: stored as "Alice"
        "\u0430lice",  # Cyrillic a
        "ALICE",
        "\u0410\u13de\u0406\u0421\u0415",  # Cyrillic and Cherokee capitals
        "\U0001d41alice",  # mathematical bold a
    ],
)
def test_a_name_that_looks_like_one_taken_is_refused(anonymous_client, lookalike) -> None:
    assert _sign_up(anonymous_client, "alice").status_code == 201
    response = _sign_up(anonymous_client, lookalike)
    assert response.status_code == 409, response.content
    assert list(error_of(response)["detail"]) == ["username"]
    assert User.objects.count() == 1


def test_the_first_of_two_lookalikes_keeps_the_name_whichever_script_it_is(
    anonymous_client,
) -> None:
    assert _sign_up(anonymous_client, "\u0455\u0435\u0440").status_code == 201  # Cyrillic
    response = _sign_up(anonymous_client, "sep")
    assert response.status_code == 409
    assert list(error_of(response)["detail"]) == ["username"]


@pytest.mark.parametrize(
    "mixed",
    ["p\u0430ypal", "\u0455taff", "ab\u03b1\u03b2", "\u0441\u043e\u0434e"],
)
def test_a_name_mixing_latin_with_cyrillic_or_greek_is_refused(anonymous_client, mixed) -> None:
    response = _sign_up(anonymous_client, mixed)
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert list(error["detail"]) == ["username"] and "script" in error["message"]
    assert User.objects.count() == 0


@pytest.mark.parametrize(
    "name", ["Jos\u00e9_1", "\u5c71\u7530\u305f\u308d\u3046", "\u0411\u043e\u0440\u0438\u0441"]
)
def test_names_of_one_script_or_a_japanese_mix_are_welcome(anonymous_client, name) -> None:
    assert _sign_up(anonymous_client, name).status_code == 201


def test_the_sign_up_page_refuses_a_lookalike_too(anonymous_client, client) -> None:
    assert _sign_up(anonymous_client, "alice").status_code == 201
    response = client.post("/signup/", {"username": "\u0430lice", "password": "plenty-long-99"})
    assert response.status_code == 400 and "looks like it" in response.content.decode()
    assert User.objects.count() == 1


def test_the_database_refuses_a_second_account_with_the_same_key(anonymous_client) -> None:
    assert _sign_up(anonymous_client, "alice").status_code == 201
    intruder = User.objects.create_user(username="\u0430lice")
    with pytest.raises(IntegrityError), transaction.atomic():
        UsernameKey.objects.create(user=intruder, key=username_key("\u0430lice"))


def test_the_token_endpoint_answers_the_same_token_each_time(anonymous_client, owner) -> None:
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
def test_wrong_credentials_get_no_token(anonymous_client, owner, data) -> None:
    response = anonymous_client.post("/api/auth/token/", data, format="json")
    assert response.status_code == 400
    error_of(response)
    assert Token.objects.count() == 0


def test_a_bad_token_is_refused_with_the_error_body(anonymous_client) -> None:
    anonymous_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = anonymous_client.get("/api/bots/")
    assert response.status_code == 401
    assert error_of(response)["code"] == "authentication_failed"


def test_sign_ups_are_throttled(anonymous_client, monkeypatch) -> None:
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


def token_request(client, username: str, password: str, **extra):
    return client.post(
        "/api/auth/token/", {"username": username, "password": password}, format="json", **extra
    )


def test_wrong_passwords_from_one_address_get_429_whatever_x_forwarded_for_says(
    anonymous_client, owner, settings, monkeypatch
) -> None:
    from tournaments.api.throttling import WriteRateThrottle

    monkeypatch.setattr(WriteRateThrottle, "THROTTLE_RATES", {"auth": "20/minute"})
    settings.AUTH_LOCKOUT_FAILURES = 1000  # the per-address limit alone
    responses = [
        token_request(anonymous_client, "owner", f"guess-{i}", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}")
        for i in range(25)
    ]
    assert [r.status_code for r in responses] == [400] * 20 + [429] * 5
    for response in responses[20:]:
        error = error_of(response)
        assert error["code"] == "throttled"
        assert 1 <= error["retry_after"] <= 60
        assert f"try again in {error['retry_after']} s" in error["message"]
    assert Token.objects.count() == 0


def test_wrong_passwords_for_one_account_lock_it_out_with_retry_after(
    anonymous_client, owner, settings, monkeypatch
) -> None:
    from tournaments.api.throttling import WriteRateThrottle

    monkeypatch.setattr(WriteRateThrottle, "THROTTLE_RATES", {"auth": "1000/minute"})
    settings.AUTH_LOCKOUT_FAILURES = 10
    settings.AUTH_LOCKOUT_SECONDS = 900
    responses = [token_request(anonymous_client, "owner", f"guess-{i}") for i in range(25)]
    assert [r.status_code for r in responses] == [400] * 10 + [429] * 15
    for response in responses[10:]:
        error = error_of(response)
        assert error["code"] == "locked_out"
        assert 890 <= error["retry_after"] <= 900
        assert error["message"] == (
            f"Too many sign-in attempts for this account; try again in {error['retry_after']} s."
        )


def test_the_account_limit_holds_across_addresses_and_refuses_the_right_password(
    anonymous_client, owner, settings
) -> None:
    settings.AUTH_LOCKOUT_FAILURES = 5
    for i in range(5):
        wrong = token_request(anonymous_client, "owner", "wrong", REMOTE_ADDR=f"198.51.100.{i}")
        assert wrong.status_code == 400, i
    right = token_request(anonymous_client, "owner", PASSWORD, REMOTE_ADDR="203.0.113.1")
    assert right.status_code == 429
    assert error_of(right)["code"] == "locked_out"
    assert Token.objects.count() == 0
    # Another account is not held up by it, from any of those addresses.
    User.objects.create_user(username="bystander", password=PASSWORD)
    other = token_request(anonymous_client, "bystander", PASSWORD, REMOTE_ADDR="198.51.100.0")
    assert other.status_code == 200


def test_a_name_that_differs_only_in_case_counts_for_the_same_account(
    anonymous_client, owner, settings
) -> None:
    settings.AUTH_LOCKOUT_FAILURES = 2
    for username in ("OWNER", "Owner"):
        assert token_request(anonymous_client, username, "wrong").status_code == 400
    assert token_request(anonymous_client, "owner", PASSWORD).status_code == 429


def test_a_successful_sign_in_starts_the_count_again(anonymous_client, owner, settings) -> None:
    settings.AUTH_LOCKOUT_FAILURES = 3
    codes = [token_request(anonymous_client, "owner", "wrong").status_code for _ in range(2)]
    codes.append(token_request(anonymous_client, "owner", PASSWORD).status_code)
    codes += [token_request(anonymous_client, "owner", "wrong").status_code for _ in range(4)]
    assert codes == [400, 400, 200, 400, 400, 400, 429]


def test_the_right_password_works_again_once_the_lockout_is_over(
    anonymous_client, owner, settings
) -> None:
    settings.AUTH_LOCKOUT_FAILURES = 1
    settings.AUTH_LOCKOUT_SECONDS = 1
    assert token_request(anonymous_client, "owner", "wrong").status_code == 400
    assert token_request(anonymous_client, "owner", PASSWORD).status_code == 429
    wait_for(
        lambda: token_request(anonymous_client, "owner", PASSWORD).status_code == 200,
        timeout=30,
        what="the lockout to end",
    )


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
) -> None:
    old = _token_of(anonymous_client, "owner", PASSWORD)
    assert old is not None and _me_status(old) == 200
    change(owner)
    assert _me_status(old) == 401
    assert _token_of(anonymous_client, "owner", PASSWORD) is None
    new = _token_of(anonymous_client, "owner", NEW_PASSWORD)
    assert new is not None and new != old
    assert _me_status(new) == 200
    assert Token.objects.get(user=owner).key == new


def test_the_admin_changing_a_password_ends_the_token(anonymous_client, owner, staff) -> None:
    old = _token_of(anonymous_client, "owner", PASSWORD)
    assert old is not None
    response = _signed_in(staff).post(
        f"/admin/auth/user/{owner.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert _me_status(old) == 401
    assert not Token.objects.filter(user=owner).exists()


def test_revoking_the_token_refuses_it_and_signing_in_issues_a_new_one(
    anonymous_client, owner
) -> None:
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


def test_revoking_needs_a_signed_in_caller(anonymous_client, owner_client, owner) -> None:
    assert anonymous_client.post("/api/auth/token/revoke/").status_code == 401
    assert Token.objects.filter(user=owner).exists()


def test_revoking_from_a_session_needs_the_csrf_token(owner) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(owner)
    Token.objects.create(user=owner)
    assert client.post("/api/auth/token/revoke/").status_code == 403
    assert Token.objects.filter(user=owner).exists()
