"""Errors look the same everywhere, and no input makes the API answer 500."""

from __future__ import annotations

import json

import pytest
import redis
from django.contrib.auth.models import User
from django.test import Client

from tests.support.api import error_of
from tournaments.models import Bot, Variant

TEN_MEGABYTES = b'{"name": "' + b"x" * (10 * 1024 * 1024) + b'"}'


def write_endpoints(bot_id: int) -> list[tuple[str, str]]:
    return [
        ("post", "/api/auth/signup/"),
        ("post", "/api/auth/token/"),
        ("post", "/api/bots/"),
        ("patch", f"/api/bots/{bot_id}/"),
        ("post", f"/api/bots/{bot_id}/rotate-secret/"),
        ("post", f"/api/bots/{bot_id}/verify/"),
        ("post", "/api/variants/"),
    ]


def counts() -> tuple[int, int, int]:
    return User.objects.count(), Bot.objects.count(), Variant.objects.count()


def test_a_ten_megabyte_body_is_refused_on_every_write_endpoint(
    bot, staff_client, owner_client
) -> None:
    before = counts()
    for method, url in write_endpoints(bot.pk):
        client = staff_client if "variants" in url else owner_client
        response = getattr(client, method)(url, TEN_MEGABYTES, content_type="application/json")
        assert response.status_code == 413, url
        assert error_of(response)["code"] == "payload_too_large"
    assert counts() == before


def test_a_large_body_without_a_declared_length_is_still_refused(owner_client) -> None:
    from io import BytesIO

    from tournaments.api.bodies import PayloadTooLarge
    from tournaments.api.parsers import LimitedJSONParser

    with pytest.raises(PayloadTooLarge):
        LimitedJSONParser().parse(BytesIO(TEN_MEGABYTES))


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        (b"{not json", "application/json", 400),
        (b"\xff\xfe\x00", "application/json", 400),
        (b'{"a": NaN}', "application/json", 400),
        (b"[" * 100000, "application/json", 400),
        (b"name=x", "application/x-www-form-urlencoded", 415),
        (b"<xml/>", "text/xml", 415),
    ],
)
def test_malformed_bodies_get_a_4xx_on_every_write_endpoint(
    bot, staff_client, owner_client, body, content_type, status
) -> None:
    before = counts()
    for method, url in write_endpoints(bot.pk):
        if url.endswith(("rotate-secret/", "verify/")):
            continue  # these take no body
        client = staff_client if "variants" in url else owner_client
        response = getattr(client, method)(url, body, content_type=content_type)
        assert response.status_code == status, (url, response.content[:200])
        error_of(response)
    assert counts() == before


def test_an_empty_body_names_the_missing_fields(owner_client, staff_client) -> None:
    response = owner_client.post("/api/bots/", b"", content_type="application/json")
    assert response.status_code == 400
    assert set(error_of(response)["detail"]) == {"name", "endpoint_url"}
    response = staff_client.post("/api/variants/", b"", content_type="application/json")
    assert response.status_code == 400
    assert set(error_of(response)["detail"]) == {"name", "base"}


def test_an_unknown_api_path_is_a_json_404(anonymous_client) -> None:
    response = anonymous_client.get("/api/no/such/thing/")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete", "options"])
def test_an_unknown_api_path_is_a_json_404_for_every_method_even_with_csrf_checks(
    db, method
) -> None:
    client = Client(enforce_csrf_checks=True)  # as a browser's session would be checked
    response = getattr(client, method)("/api/no/such/thing/", content_type="application/json")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert error_of(response)["code"] == "not_found"


def test_a_wrong_method_is_a_json_405(anonymous_client) -> None:
    response = anonymous_client.delete("/api/variants/")
    assert response.status_code in (401, 405)
    error_of(response)


def test_the_api_root_lists_the_endpoints(anonymous_client) -> None:
    body = anonymous_client.get("/api/").json()
    assert {"bots", "variants", "signup", "token", "schema", "docs"} <= set(body)
    assert {"tournaments", "matches", "leaderboard", "ratings-recompute"} <= set(body)


@pytest.mark.parametrize(
    "query",
    [
        "page=0",
        "page=-1",
        "page=abc",
        "page=999999",
        "page_size=100000",
        "ordering=secret",
        "ordering=;drop",
    ],
)
def test_odd_query_strings_never_answer_500(anonymous_client, bot, query) -> None:
    for url in (
        "/api/bots/",
        "/api/variants/",
        "/api/tournaments/",
        "/api/matches/",
        "/api/leaderboard/",
        f"/api/bots/{bot.pk}/rating-history/",
        f"/api/bots/{bot.pk}/ratings/",
        f"/api/bots/{bot.pk}/analytics/",
    ):
        response = anonymous_client.get(f"{url}?{query}")
        assert response.status_code in (200, 400, 404), (url, query)
        if response.status_code != 200:
            error_of(response)
        else:
            assert bot.secret not in response.content.decode()


def test_writes_are_throttled_but_reads_are_not(owner_client, monkeypatch) -> None:
    from tournaments.api.throttling import WriteRateThrottle

    monkeypatch.setattr(
        WriteRateThrottle, "THROTTLE_RATES", {"writes": "2/minute", "auth": "2/minute"}
    )
    codes = [
        owner_client.post(
            "/api/bots/", {"name": f"b{i}", "endpoint_url": "https://93.184.216.34/"}, format="json"
        ).status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]
    assert Bot.objects.count() == 2
    assert all(owner_client.get("/api/bots/").status_code == 200 for _ in range(5))


def test_a_server_error_under_the_api_is_answered_in_json(rf) -> None:
    from config.urls import handler500

    response = handler500(rf.get("/api/bots/"))
    assert response.status_code == 500
    assert json.loads(response.content)["error"]["code"] == "server_error"
    assert handler500(rf.get("/admin/")).status_code == 500


@pytest.mark.parametrize("query", ["name=%00", "owner=a%00b", "base=%00"])
def test_a_null_character_in_a_filter_is_a_400_naming_it(anonymous_client, query) -> None:
    url = "/api/variants/" if query.startswith("base") else "/api/bots/"
    response = anonymous_client.get(f"{url}?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] in error_of(response)["detail"]


@pytest.mark.parametrize("query", ["ordering=name%00", "x%00=1", "page=%00"])
def test_a_null_character_elsewhere_in_the_query_never_answers_500(anonymous_client, query) -> None:
    for url in ("/api/bots/", "/api/variants/"):
        assert anonymous_client.get(f"{url}?{query}").status_code in (200, 400, 404)


def test_a_null_character_anywhere_in_a_body_is_refused_and_nothing_is_written(
    owner_client, staff_client, bot
) -> None:
    before = counts()
    calls = [
        owner_client.post(
            "/api/bots/",
            {"name": "nul", "endpoint_url": "https://93.184.216.34/", "description": "a\x00b"},
            format="json",
        ),
        owner_client.patch(f"/api/bots/{bot.pk}/", {"description": "\x00"}, format="json"),
        staff_client.post(
            "/api/variants/",
            {"name": "nul", "base": "oh-hell", "options": {"made": "10+bid\x00"}},
            format="json",
        ),
        staff_client.post(
            "/api/variants/",
            {"name": "nul", "base": "oh-hell", "options": {"\x00": 1}},
            format="json",
        ),
    ]
    for response in calls:
        assert response.status_code == 400
        assert "Null characters" in error_of(response)["message"]
    assert counts() == before
    assert Bot.objects.get(pk=bot.pk).description == ""


def test_writes_go_on_unthrottled_and_logged_while_the_cache_is_down(
    owner_client, settings, private_redis, caplog
) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": private_redis.url,
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }

    def register(name: str) -> int:
        data = {"name": name, "endpoint_url": "https://93.184.216.34/"}
        return owner_client.post("/api/bots/", data, format="json").status_code

    assert register("counted") == 201
    # redis-py types a command's answer as the asyncio client's too (Awaitable[Any] | Any).
    keys: int = redis.Redis.from_url(private_redis.url).dbsize()  # type: ignore[assignment]
    assert keys > 0  # the count is in that Redis
    private_redis.kill()
    assert register("during-outage") == 201
    assert Bot.objects.filter(name="during-outage").exists()
    assert "write throttle skipped, the cache is unreachable" in caplog.text
