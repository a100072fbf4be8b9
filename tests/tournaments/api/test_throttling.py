"""The throttles count the client the connection shows, not the X-Forwarded-For it writes."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection

from tests.support.web_server import Answer, gunicorn, post_json
from tournaments.api.throttling import retry_after_seconds, throttle_ident

PASSWORD = "plenty-long-pass-99"

needs_the_test_database = pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="the server process needs the test's database: set DATABASE_URL (./run test "
    "does when PostgreSQL answers on 127.0.0.1)",
)


def sign_up(port: int, username: str, forwarded_for: str) -> Answer:
    return post_json(
        port,
        "/api/auth/signup/",
        {"username": username, "password": PASSWORD},
        {"X-Forwarded-For": forwarded_for},
    )


def assert_says_when_to_retry(answer: Answer) -> None:
    assert answer.status == 429, answer
    seconds = int(answer.headers["Retry-After"])
    assert 1 <= seconds <= 60
    error = answer.body["error"]
    assert error["code"] == "throttled" and error["retry_after"] == seconds
    assert error["message"] == f"Too many requests; try again in {seconds} s."


@needs_the_test_database
@pytest.mark.django_db(transaction=True)
def test_sign_ups_with_a_made_up_x_forwarded_for_each_are_throttled_as_one_address(
    private_redis,
) -> None:
    # Two workers share the counts through Redis, as a deployment's do.
    with gunicorn(workers=2, REDIS_URL=private_redis.url, THROTTLE_AUTH_RATE="7/minute") as port:
        answers = [sign_up(port, f"spoof{i}", f"203.0.113.{i}") for i in range(40)]
    assert [a.status for a in answers] == [201] * 7 + [429] * 33
    for answer in answers[7:]:
        assert_says_when_to_retry(answer)
    assert User.objects.count() == 7


@needs_the_test_database
@pytest.mark.django_db(transaction=True)
def test_behind_a_trusted_proxy_each_client_it_reports_is_counted_and_no_one_else(
    private_redis,
) -> None:
    with gunicorn(
        REDIS_URL=private_redis.url,
        THROTTLE_AUTH_RATE="2/minute",
        TRUSTED_PROXIES="127.0.0.1/32",
    ) as port:
        # What a client writes itself stands left of what the proxy appends: only the latter counts.
        first = [sign_up(port, f"a{i}", f"10.9.9.{i}, 198.51.100.7") for i in range(3)]
        second = [sign_up(port, f"b{i}", f"10.9.9.{i}, 198.51.100.8") for i in range(3)]
    assert [a.status for a in first] == [201, 201, 429]
    assert [a.status for a in second] == [201, 201, 429]
    assert_says_when_to_retry(first[2])
    assert set(User.objects.values_list("username", flat=True)) == {"a0", "a1", "b0", "b1"}


@pytest.mark.parametrize(
    ("address", "counted_as"),
    [
        ("198.51.100.7", "198.51.100.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
        ("", ""),
    ],
)
def test_an_ipv6_client_is_counted_by_its_slash_64(address, counted_as) -> None:
    assert throttle_ident(address) == counted_as


@pytest.mark.parametrize(
    ("wait", "seconds"), [(None, 1), (0.0, 1), (0.2, 1), (1.0, 1), (36.01, 37), (59.9, 60)]
)
def test_retry_after_is_whole_seconds_rounded_up_and_never_zero(wait, seconds) -> None:
    assert retry_after_seconds(wait) == seconds
