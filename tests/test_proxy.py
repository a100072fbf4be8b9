"""The shipped reverse proxy (docker/nginx.conf) keeps the site answering while clients dawdle.

gunicorn's sync workers each serve one connection at a time, start to end: on bare gunicorn
with 2 workers, two connections sending one header line every 2 s hold both workers until
gunicorn's worker timeout kills them (bench/bench_slow_clients.py shows it, 30 s of silence).
nginx buffers whole requests first, so the same clients never reach gunicorn. Runs the real
nginx with the repository's file, only its upstream address and listen port changed.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from django.conf import settings
from django.db import connection

from tests.support.reverse_proxy import (
    NGINX_CONF,
    ROOT,
    SlowClients,
    find_nginx,
    nginx,
    probe,
    skip_reason,
)
from tests.support.web_server import gunicorn, post_json


def needs_nginx_and_the_test_database(test: Callable[..., None]) -> Callable[..., None]:
    """Skip without nginx (one loud line) or without a database a server process can share."""
    marks = [
        pytest.mark.skipif(find_nginx() is None, reason=skip_reason()),
        pytest.mark.skipif(
            connection.vendor == "sqlite",
            reason="the server process needs the test's database: set DATABASE_URL (./run test "
            "does when PostgreSQL answers on 127.0.0.1)",
        ),
        pytest.mark.django_db(transaction=True),
    ]
    for mark in marks:
        test = mark(test)
    return test


PROBE_TIMEOUT = 5.0  # generous: an unloaded /api/health/ answers in milliseconds
PROBES = 8
INTERVAL = 2.0  # seconds between two header lines of a slow client


def probes_while_slow_clients_are_open(port: int, slow: int) -> tuple[list[float], SlowClients]:
    """Open ``slow`` slow clients on ``port``, then probe /api/health/ through it one at a time."""
    seconds = []
    with SlowClients(port, slow, INTERVAL) as clients:
        for _ in range(PROBES):
            answer = probe(port, "/api/health/", PROBE_TIMEOUT)
            assert answer.status == 200, f"probe failed after {answer.seconds:.1f} s"
            seconds.append(answer.seconds)
            time.sleep(0.5)
    return seconds, clients


@pytest.mark.parametrize("slow", [2, 50])
@needs_nginx_and_the_test_database
def test_health_answers_through_nginx_while_slow_clients_hold_connections(slow: int) -> None:
    with gunicorn(workers=2) as upstream, nginx(upstream) as port:
        seconds, clients = probes_while_slow_clients_are_open(port, slow)
    assert max(seconds) < PROBE_TIMEOUT
    # The slow clients really were sending all along (the probes took about 6 s).
    assert clients.lines_sent >= slow


@needs_nginx_and_the_test_database
def test_a_client_written_x_forwarded_for_does_not_change_the_address_the_throttle_counts(
    private_redis,
) -> None:
    with (
        gunicorn(
            workers=2,
            REDIS_URL=private_redis.url,
            THROTTLE_AUTH_RATE="2/minute",
            TRUSTED_PROXIES="1",
        ) as upstream,
        nginx(upstream) as port,
    ):
        statuses = [
            post_json(
                port,
                "/api/auth/signup/",
                {"username": f"forger{i}", "password": "plenty-long-pass-99"},
                {"X-Forwarded-For": f"203.0.113.{i}"},
            ).status
            for i in range(4)
        ]
    # Each made-up address would be a client of its own if nginx passed the header on as sent.
    assert statuses == [201, 201, 429, 429]


def test_nginx_takes_request_bodies_as_large_as_the_app_does() -> None:
    found = re.search(r"^\s*client_max_body_size (\d+)k;", NGINX_CONF.read_text(), re.M)
    assert found, f"{NGINX_CONF} should set client_max_body_size in k"
    assert int(found.group(1)) * 1024 == settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def test_compose_publishes_only_the_proxy_and_web_believes_its_one_hop() -> None:
    compose = (ROOT / "docker" / "compose.yaml").read_text()
    services = compose.split("\nservices:\n")[1].split("\nvolumes:\n")[0]
    blocks = dict(re.findall(r"^  ([\w-]+):\n((?:    .*\n|\s*\n)*)", services, re.M))
    published = [name for name, block in blocks.items() if re.search(r"^    ports:", block, re.M)]
    assert published == ["proxy"]
    assert "dockerfile: docker/nginx.Dockerfile" in blocks["proxy"]
    assert "TRUSTED_PROXIES: ${TRUSTED_PROXIES:-1}" in blocks["web"]
