"""A worker's database connections do not grow with the matches it plays (real worker, real
PostgreSQL): the pool keeps them across tasks and heartbeats (config/settings.py)."""

from __future__ import annotations

import signal

import pytest
from django.db import connection

from tests.support.workers import needs_postgres_and_redis, wait_for
from tournaments.models import Match, MatchStatus
from tournaments.services.matches import match_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]

MATCHES = 60
POOL = 4
APP_NAME = "ohhell-pooled-worker"


def _sessions_so_far() -> int:
    """Sessions ever opened on the test database, as the server counts them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        (sessions,) = cursor.fetchone()
    return int(sessions)


def _worker_backends() -> int:
    """Connections of the worker (libpq names them after PGAPPNAME) open now."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = %s",
            [APP_NAME],
        )
        (count,) = cursor.fetchone()
    return int(count)


def test_a_worker_opens_a_bounded_number_of_connections_however_many_matches_it_plays(
    playing_bots, short_variant, start_worker
) -> None:
    bots = playing_bots(4)
    before = _sessions_so_far()
    worker = start_worker(
        "pooled", concurrency=POOL, pool="threads", env={"DB_POOL_MAX_SIZE": str(POOL)}
    )
    ids = [
        match_create(
            variant_id=short_variant.pk,
            bot_ids=[b.pk for b in bots],
            seed=500 + i,
            time_limit_ms=500,
        ).pk
        for i in range(MATCHES)
    ]
    wait_for(
        lambda: (
            Match.objects.filter(pk__in=ids, status=MatchStatus.FINISHED, rated=True).count()
            == MATCHES
        ),
        600,
        f"{MATCHES} matches played, recorded and rated",
    )
    worker.send_signal(signal.SIGTERM)
    worker.wait(timeout=120)
    # A backend reports its session when it ends: wait for the worker's to end.
    wait_for(lambda: _worker_backends() == 0, 60, "the worker's connections closed")
    opened = _sessions_so_far() - before
    # The pool's connections, a few the worker opens as it starts (Django's checks) and this
    # test's own; unpooled, every task and every match's heartbeat opened new ones (several
    # per match).
    assert opened <= POOL + 4, f"{opened} connections for {MATCHES} matches"
