"""Real Celery worker processes for tests: started on the test database and a private queue."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def worker_database_url() -> str:
    """The URL of the database this test runs on, for processes started by the test."""
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{connection.settings_dict['NAME']}"


def start_celery_worker(queue: str, name: str, concurrency: int = 1) -> subprocess.Popen:
    """Start a worker consuming the ``queue`` deployment's queues (control, matches, ladder),
    as one started without -Q does, in a session of its own (so it can be killed whole)."""
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
        "BOT_ALLOW_LOOPBACK": "1",
        "DB_CONN_MAX_AGE": "0",
    }
    command = [
        *(sys.executable, "-m", "celery", "-A", "config", "worker"),
        *("-n", f"{name}-{queue}@%h", "-c", str(concurrency), "--loglevel", "WARNING"),
        *("--without-gossip", "--without-mingle"),
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)


def kill(worker: subprocess.Popen) -> None:
    """SIGKILL the worker and every process of its session."""
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")
