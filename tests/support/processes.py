"""Servers a test starts as processes of their own: waiting until one answers, stopping it."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def answering(
    process: subprocess.Popen, port: int, name: str, *, within_s: float
) -> Iterator[None]:
    """Wait until ``process`` (started in a session of its own) answers ``/api/health/`` on
    ``port`` with a 200; kill its whole session at the end."""
    try:
        deadline = time.monotonic() + within_s
        while health_status(port) != 200:
            assert process.poll() is None, f"{name} exited at start"
            assert time.monotonic() < deadline, f"{name} did not answer in {within_s:.0f} s"
            time.sleep(0.1)
        yield
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def health_status(port: int) -> int | None:
    """The status ``/api/health/`` answers on ``port`` (None when nothing answers)."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", "/api/health/")
            response = conn.getresponse()
            response.read()
            return response.status
        finally:
            conn.close()
    except OSError:
        return None
