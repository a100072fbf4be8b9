"""Support for tests with real Celery worker processes: the test database's URL, waiting, and
a local worker on embedded defaults as ./run starts it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from kombu import Queue

from config.startup import EMBEDDED_NOTED

ROOT = Path(__file__).resolve().parents[2]

# Tests with real workers, a broker and concurrent connections run on PostgreSQL and Redis only.
needs_postgres_and_redis = pytest.mark.skipif(
    not settings.REDIS_URL or connection.vendor == "sqlite",
    reason="needs PostgreSQL and Redis: set DATABASE_URL and REDIS_URL (./run test does "
    "when they answer on 127.0.0.1)",
)


def database_url() -> str:
    """The URL of the test database, for processes started by a test."""
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def kill_worker(worker: subprocess.Popen[bytes]) -> None:
    """SIGKILL a worker and every process of its session, as a crash of the machine would."""
    # The session may outlive its leader (a worker's pool); ProcessLookupError: nothing left.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)


def queue_length(queue: str) -> int:
    """Messages waiting in a broker queue, as the sweeper counts them."""
    from tournaments.dispatch import messages_waiting

    return messages_waiting(queue)


def broker_queue(kind: str) -> str:
    """The name of this process's queue of ``kind`` ("matches", "ladder"; "" for control)."""
    from config.celery_app import app

    name = app.conf.task_default_queue
    return f"{name}.{kind}" if kind else name


def purge_queue(queue: str) -> int:
    """Drop every message of a broker queue, as a broker restarted without its data would."""
    from config.celery_app import app

    with app.connection_for_write() as conn:
        return Queue(queue).bind(conn.default_channel).purge() or 0


def drop_database_connections() -> int:
    """Terminate every other connection to the test database, as a database failover would."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        (dropped,) = cursor.fetchone()
    return int(dropped)


def embedded_env(database: Path) -> dict[str, str]:
    """This process's environment on embedded defaults (DEBUG on, no Redis, tasks not run
    in-process) with its own SQLite file, next to which the local broker keeps its messages."""
    unset = ("DATABASE_URL", "REDIS_URL", "CELERY_EAGER", "DEBUG", EMBEDDED_NOTED)
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["DATABASE_URL"] = f"sqlite:///{database}"
    return env


def migrate(env: dict[str, str]) -> None:
    """Migrate the database of ``env`` as ./run does before it starts the local worker (which
    makes the local broker ready too)."""
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )


@contextmanager
def local_worker(env: dict[str, str], log: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """A Celery worker started as ./run starts it (threads, eight at once), its output in
    ``log``; stopped on leaving. ``args`` are added to its command line."""
    with log.open("wb") as output:
        worker = subprocess.Popen(
            [
                *(sys.executable, "-m", "celery", "-A", "config", "worker"),
                *("--pool", "threads", "-c", "8"),
                *("--loglevel", "WARNING", "--without-gossip", "--without-mingle"),
                "--without-heartbeat",
                *args,
            ],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield worker
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()
