"""A match's heartbeat goes on after its database connection is dropped (real PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings
from django.db import connection

from tests.tournaments.workers import wait_for
from tournaments.services.matches import Heartbeat

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
        reason="needs PostgreSQL: set DATABASE_URL (./run test does when it answers)",
    ),
]


def test_the_heartbeat_thread_beats_on_after_its_connection_is_terminated():
    pids: list[int] = []
    lock = threading.Lock()

    def beat() -> bool:
        with connection.cursor() as cursor:  # the heartbeat thread's own connection
            cursor.execute("SELECT pg_backend_pid()")
            (pid,) = cursor.fetchone()
        with lock:
            pids.append(pid)
        return True

    with Heartbeat(beat, every=0.05):
        wait_for(lambda: len(pids) >= 2, 30, "the first beats")
        first = pids[-1]
        with connection.cursor() as cursor:  # the test's connection drops the thread's
            cursor.execute("SELECT pg_terminate_backend(%s)", [first])
        wait_for(lambda: any(pid != first for pid in pids), 30, "a beat on a new connection")
        beats = len(pids)
        wait_for(lambda: len(pids) >= beats + 3, 30, "beats going on after the drop")
