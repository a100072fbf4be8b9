"""A match survives its database connections being dropped (real PostgreSQL): the heartbeat
goes on and the final write of a played match is tried again on a fresh connection."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from tests.support.workers import wait_for
from tournaments.leases import Heartbeat
from tournaments.models import Match, MatchStatus, Replay
from tournaments.services.matches import match_create
from tournaments.services.runs import match_run

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor == "sqlite",
        reason="needs PostgreSQL: set DATABASE_URL (./run test does when it answers)",
    ),
]


def test_the_heartbeat_thread_beats_on_after_its_connection_is_terminated() -> None:
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


def _backend_alive(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        (count,) = cursor.fetchone()
    return count == 1


def test_a_played_match_is_recorded_once_after_its_connection_is_dropped(
    playing_bots, example_bots, short_variant
) -> None:
    bots = playing_bots(4)
    bots[0].endpoint_url = bots[0].endpoint_url.replace("/b", "/hook/b")
    bots[0].save(update_fields=["endpoint_url"])
    match = match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=11, time_limit_ms=2000
    )
    with connection.cursor() as cursor:  # the connection that will play and record the match
        cursor.execute("SELECT pg_backend_pid()")
        (playing_pid,) = cursor.fetchone()
    dropped = threading.Event()

    def drop_the_playing_connection() -> None:
        # Play makes no query on the playing connection, so its next one is the final write.
        if dropped.is_set():
            return
        try:
            with connection.cursor() as cursor:  # the bot thread's own connection
                cursor.execute("SELECT pg_terminate_backend(%s)", [playing_pid])
            wait_for(lambda: not _backend_alive(playing_pid), 30, "the backend to end")
        finally:
            connection.close()
        dropped.set()

    example_bots.before_answer = drop_the_playing_connection
    try:
        outcome = match_run(match_id=match.pk)
    finally:
        example_bots.before_answer = None

    assert dropped.is_set()
    assert outcome == "recorded"
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED
    assert match.attempts == 1
    assert match.error == ""
    assert Replay.objects.filter(match=match).count() == 1
    assert Match.objects.filter(pk=match.pk, status=MatchStatus.QUEUED).count() == 0
