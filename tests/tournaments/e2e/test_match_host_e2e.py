"""A worker process plays many matches at once on its event loop (real Celery workers, real
PostgreSQL and Redis, bots on loopback answering in 150 ms): its database connections stay a
small constant while dozens of matches wait on their bots, and a worker killed with SIGKILL
holding them all leaves each to be played again, recorded once and rated once."""

from __future__ import annotations

import signal
import subprocess
from datetime import timedelta

import pytest
from django.db import connection

from tests.support.workers import kill_worker, needs_postgres_and_redis, wait_for
from tournaments.models import Match, MatchStatus, Rating, RatingHistory, Replay
from tournaments.services.matches import match_create
from tournaments.services.recompute import ratings_recompute
from tournaments.services.sweeps import match_sweep_stuck

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]

IN_FLIGHT = 60
CLAIMING_THREADS = 2
POOL = 32
# A match task returns within milliseconds, so a match worker reserves messages ahead, as
# docker/compose.yaml's do.
PREFETCH = 16


@pytest.fixture
def slow_table(playing_bots):
    """A five-card variant and eight bots that think 150 ms before each answer, so a match
    waits on its bots for about twelve seconds."""
    from tests.support.users import make_user
    from tournaments.services.variants import variant_create

    variant = variant_create(
        user=make_user("host-staff", is_staff=True),
        name="host-five",
        base="oh-hell",
        options={"max_cards": 5, "order": "down"},
    )
    bots = playing_bots(8)
    for bot in bots:  # the example server answers after 150 ms on these paths
        bot.endpoint_url = bot.endpoint_url.replace("/b", "/slow/b")
        bot.save(update_fields=["endpoint_url"])
    return variant, bots


def _queue(variant, bots, count: int) -> list[int]:
    return [
        match_create(
            variant_id=variant.pk,
            bot_ids=[bots[(i + k) % len(bots)].pk for k in range(4)],
            seed=7000 + i,
            time_limit_ms=3000,
        ).pk
        for i in range(count)
    ]


def _host(name: str, start_worker) -> subprocess.Popen:
    return start_worker(
        name,
        concurrency=CLAIMING_THREADS,
        pool="threads",
        env={
            "MATCH_HOST_CAPACITY": str(IN_FLIGHT + 20),
            "DB_POOL_MAX_SIZE": str(POOL),
            "PGAPPNAME": f"ohhell-{name}",
        },
        args=("--prefetch-multiplier", str(PREFETCH)),
    )


def _running_in(process: subprocess.Popen, ids: list[int]) -> int:
    """Matches of ``ids`` running under a claim of ``process`` (a claim token names its pid)."""
    return Match.objects.filter(
        pk__in=ids, status=MatchStatus.RUNNING, claimed_by__contains=f":{process.pid}:"
    ).count()


def _swept(process: subprocess.Popen, ids: list[int]) -> bool:
    """Sweep stuck matches as beat would; whether none of ``ids`` is left under ``process``."""
    match_sweep_stuck(stale_after=timedelta(seconds=2))
    return _running_in(process, ids) == 0


def _connections_of(name: str) -> int:
    """Database connections the worker ``name`` holds open now (libpq names them after
    PGAPPNAME)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = %s",
            [f"ohhell-{name}"],
        )
        (count,) = cursor.fetchone()
    return int(count)


def _done(ids: list[int]) -> int:
    return Match.objects.filter(pk__in=ids, status=MatchStatus.FINISHED, rated=True).count()


def _ratings() -> list[tuple]:
    return list(Rating.objects.order_by("bot_id").values_list("bot_id", "mu", "sigma", "matches"))


def test_a_worker_killed_holding_many_matches_leaves_each_recorded_and_rated_once(
    slow_table, start_worker
) -> None:
    variant, bots = slow_table
    doomed = _host("doomed", start_worker)
    ids = _queue(variant, bots, IN_FLIGHT)
    wait_for(
        lambda: _running_in(doomed, ids) == IN_FLIGHT,
        180,
        f"{IN_FLIGHT} matches playing at once in one worker process",
    )
    # Two claiming threads, two recording threads, the heartbeat: a few connections however
    # many matches wait on their bots, though the pool would open up to POOL.
    held = _connections_of("doomed")
    assert 1 <= held <= CLAIMING_THREADS + 4, f"{held} connections for {IN_FLIGHT} matches"
    kill_worker(doomed)
    cut_short = [pk for pk in ids if Match.objects.get(pk=pk).status == MatchStatus.RUNNING]
    assert cut_short, "every match ended before the kill: nothing was in flight"
    wait_for(
        lambda: _swept(doomed, ids),
        60,
        "the sweeper to give back every match of the killed worker",
    )
    _host("rescuer", start_worker)
    wait_for(lambda: _done(ids) == IN_FLIGHT, 600, "every match played again and rated")

    assert Replay.objects.filter(match_id__in=ids).count() == IN_FLIGHT
    assert RatingHistory.objects.filter(match_id__in=ids).count() == 4 * IN_FLIGHT
    played = Match.objects.filter(pk__in=ids).order_by("rating_sequence")
    sequences = list(played.values_list("rating_sequence", flat=True))
    assert sequences == list(range(1, IN_FLIGHT + 1))
    again = Match.objects.filter(pk__in=cut_short)
    assert set(again.values_list("attempts", flat=True)) == {2}
    live = _ratings()
    assert ratings_recompute() == IN_FLIGHT
    assert _ratings() == live


def test_a_worker_stopped_warmly_finishes_the_matches_it_plays(slow_table, start_worker) -> None:
    variant, bots = slow_table
    worker = _host("stopping", start_worker)
    ids = _queue(variant, bots, 12)
    wait_for(lambda: _running_in(worker, ids) == 12, 180, "twelve matches playing at once")
    worker.send_signal(signal.SIGTERM)
    worker.wait(timeout=300)
    ended = Match.objects.filter(pk__in=ids, status=MatchStatus.FINISHED)
    assert ended.count() == 12
    assert set(ended.values_list("attempts", flat=True)) == {1}
