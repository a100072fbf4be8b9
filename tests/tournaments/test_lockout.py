"""Sign-in attempts counted per account in the authentication backend, for every way in."""

from __future__ import annotations

import pytest
import redis
from django.test import Client

from config.env import TrustedProxies
from tests.support.users import PASSWORD
from tournaments.lockout import sign_in_lockout

pytestmark = pytest.mark.django_db


def admin_sign_in(client: Client, password: str):
    return client.post("/admin/login/?next=/admin/", {"username": "staff", "password": password})


def test_the_admin_sign_in_is_locked_out_too_and_refuses_the_right_password(
    staff, settings
) -> None:
    settings.AUTH_LOCKOUT_FAILURES = 3
    for i in range(3):
        assert admin_sign_in(Client(REMOTE_ADDR=f"198.51.100.{i}"), "wrong").status_code == 200
    assert sign_in_lockout("staff") is None
    client = Client(REMOTE_ADDR="203.0.113.1")
    refused = admin_sign_in(client, PASSWORD)
    assert refused.status_code == 200  # the admin's own form, shown again
    assert "_auth_user_id" not in client.session
    left = sign_in_lockout("staff")
    assert left is not None and 0 < left <= settings.AUTH_LOCKOUT_SECONDS


def test_a_lockout_is_logged_with_the_account_and_the_clients_address(
    owner, settings, caplog
) -> None:
    settings.AUTH_LOCKOUT_FAILURES = 1
    settings.TRUSTED_PROXIES = TrustedProxies(count=1)
    client = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9")
    for password in ("wrong", "wrong again"):
        client.post("/signin/", {"username": "owner", "password": password})
    (line,) = [r.getMessage() for r in caplog.records if r.name == "tournaments.lockout"]
    assert "'owner'" in line and "203.0.113.9" in line and "6.6.6.6" not in line


def test_sign_in_goes_on_and_is_logged_while_the_cache_is_down(
    owner, settings, private_redis, caplog
) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": private_redis.url,
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
    client = Client()
    assert client.post("/signin/", {"username": "owner", "password": "wrong"}).status_code == 400
    # redis-py types a command's answer as awaitable or not; this client is the blocking one.
    keys: int = redis.Redis.from_url(private_redis.url).dbsize()  # type: ignore[assignment]
    assert keys > 0  # the count is in that Redis
    private_redis.kill()
    signed_in = client.post("/signin/", {"username": "owner", "password": PASSWORD})
    assert signed_in.status_code == 302
    assert "sign-in lockout skipped, the cache is unreachable" in caplog.text
