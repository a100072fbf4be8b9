"""A real gunicorn serving the app to a test, on the test's database."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.processes import answering
from tests.support.workers import database_url

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def gunicorn(workers: int = 1, **variables: str) -> Iterator[int]:
    """gunicorn on a loopback port the system picks, with ``variables`` set; yields the port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_QUEUE": f"test-{uuid.uuid4().hex[:10]}",
        **variables,
    }
    command = [sys.executable, "-m", "gunicorn", "config.wsgi", "--workers", str(workers)]
    command += ["--bind", f"fd://{listener.fileno()}", "--log-level", "warning"]
    command += ["--no-control-socket"]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, pass_fds=[listener.fileno()], start_new_session=True
    )
    listener.close()  # gunicorn holds its own copy
    with answering(process, port, "gunicorn", within_s=120):
        yield port


@dataclass(frozen=True)
class Answer:
    """What the server answered a request."""

    status: int
    headers: dict[str, str]
    body: Any


def post_json(port: int, path: str, data: Any, headers: dict[str, str] | None = None) -> Answer:
    """POST ``data`` as JSON; the answer with its body parsed."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(
            "POST",
            path,
            body=json.dumps(data).encode(),
            headers={"Content-Type": "application/json", **(headers or {})},
        )
        response = conn.getresponse()
        return Answer(response.status, dict(response.getheaders()), json.loads(response.read()))
    finally:
        conn.close()
