"""What the tests of the Python and the JavaScript starter bots share: how each is started, the
arena's signed calls to it, and raw requests with chosen headers."""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import subprocess
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from arena.limits import Limits
from arena.netpolicy import NetworkPolicy
from arena.transport import BotClient, CallResult

SECRET = "starter-secret"
LIMITS = Limits(time_limit_ms=2000)
LOOPBACK = NetworkPolicy(allow_loopback=True)
BID = {
    "protocol": "ohhell/1",
    "type": "bid",
    "hand": ["AS", "KD", "3H", "JD"],
    "legal": [0, 1, 2, 3, 4],
    "trump": "D",
    "time_limit_ms": 2000,
}


@contextmanager
def serving(command: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Run a starter bot as its header says, with the test secret and ``--port 0``; give its URL
    and the line it printed on starting."""
    proc = subprocess.Popen(
        [*command, "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "OHHELL_SECRET": SECRET},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://[\d.]+:\d+/", line)
        assert match, line
        yield match.group(0), line
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def calls(url: str, messages: list[dict[str, Any]], secret: str = SECRET) -> list[CallResult]:
    """The arena's signed calls of ``messages``, one after another."""

    async def run() -> list[CallResult]:
        async with BotClient(limits=LIMITS, policy=LOOPBACK) as client:
            return [await client.call(url, secret, m) for m in messages]

    return asyncio.run(run())


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST ``body`` with exactly ``headers``; the status answered."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        conn.request("POST", "/", body=body, headers=headers)
        return conn.getresponse().status
    finally:
        conn.close()
