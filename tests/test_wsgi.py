"""Request bodies sent with Transfer-Encoding: chunked, through a real gunicorn."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.db import connection

from tests.support.web_server import gunicorn

LIMIT = 2048

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor == "sqlite",
        reason="the server process needs the test's database: set DATABASE_URL (./run test "
        "does when PostgreSQL answers on 127.0.0.1)",
    ),
]


@pytest.fixture
def server() -> Iterator[int]:
    """gunicorn serving the app on the test database; yields its port."""
    with gunicorn(MAX_REQUEST_BYTES=str(LIMIT)) as port:
        yield port


def _post_chunked(port: int, path: str, body: bytes) -> tuple[int, dict]:
    """POST ``body`` in chunks of 100 bytes with no Content-Length."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    chunks = (body[i : i + 100] for i in range(0, len(body), 100))
    conn.request(
        "POST",
        path,
        body=chunks,
        headers={"Content-Type": "application/json"},
        encode_chunked=True,
    )
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def test_a_chunked_body_is_read(server) -> None:
    body = json.dumps({"username": "chunky", "password": "a-long-test-passphrase-42"}).encode()
    status, answer = _post_chunked(server, "/api/auth/signup/", body)
    assert status == 201, answer
    assert answer["username"] == "chunky"
    assert User.objects.filter(username="chunky").exists()


def test_a_chunked_body_over_the_size_limit_is_refused_with_413(server) -> None:
    body = json.dumps({"username": "big", "password": "x" * (LIMIT * 2)}).encode()
    status, answer = _post_chunked(server, "/api/auth/signup/", body)
    assert status == 413, answer
    assert answer["error"]["code"] == "payload_too_large"
    assert not User.objects.filter(username="big").exists()
