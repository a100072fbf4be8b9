"""Real workers ride out a real Redis broker killed (SIGKILL) and started again on the same port.

The workers run as deployed (gossip, mingle and heartbeat on, prefork and thread pools, a
queue each) and each plays a match when the broker goes while it still has room for more: a
worker holding a message it has not acknowledged yet (every match in play, as tasks are
acknowledged late) while it waits for the next one is the case that used to end the worker
process.
"""

from __future__ import annotations

import subprocess
import threading
import time
from typing import Any

import pytest
from django.db import connection

from config.celery_app import app as celery_app
from tests.support.workers import needs_postgres_and_redis, wait_for
from tournaments.models import Match, MatchStatus, Replay
from tournaments.services.matches import match_create
from tournaments.tasks import run_match

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]

OUTAGE_SECONDS = 8
# Long enough for a bot answer held back through the whole outage to still count.
TIME_LIMIT_MS = 120_000


def _send_through(broker_url: str, match: Match, queue: str | None = None) -> None:
    """Send the match to the workers listening on ``broker_url`` (on ``queue``, if given)."""
    with celery_app.connection_for_write(broker_url) as broker:
        options: dict[str, Any] = {"queue": queue} if queue else {}
        # Task.apply_async documents ``connection``; celery-types' stub does not list it.
        run_match.apply_async((match.pk,), connection=broker, **options)  # type: ignore[call-arg]


def _count(ids: list[int], status: MatchStatus) -> int:
    return Match.objects.filter(pk__in=ids, status=status).count()


def _dead(workers: dict[str, subprocess.Popen]) -> list[str]:
    return sorted(name for name, worker in workers.items() if worker.poll() is not None)


def _finished_or_a_worker_dead(ids: list[int], workers: dict[str, subprocess.Popen]) -> bool:
    return _count(ids, MatchStatus.FINISHED) == len(ids) or bool(_dead(workers))


@pytest.fixture
def hooked_bots(playing_bots, example_bots):
    """Four bots whose answers pass through ``example_bots.before_answer`` first."""
    bots = playing_bots(4)
    for bot in bots:
        bot.endpoint_url = bot.endpoint_url.replace("/b", "/hook/b")
        bot.save(update_fields=["endpoint_url"])
    yield bots
    example_bots.before_answer = None


def test_workers_with_matches_in_play_ride_out_the_broker_killed_and_started_again(
    hooked_bots, short_variant, example_bots, start_worker, private_redis, queue
) -> None:
    broker = private_redis.url
    env = {"REDIS_URL": broker}
    # Each worker plays one match on its own queue with room for a second, as a deployment's
    # workers mostly do: a prefork worker and a thread-pool one, and an idle control worker.
    queues = {"prefork": f"{queue}.matches", "threads": f"{queue}.ladder"}
    workers = {
        "prefork": start_worker(
            "prefork", concurrency=2, queues=[".matches"], env=env, as_deployed=True
        ),
        "threads": start_worker(
            "threads", concurrency=2, queues=[".ladder"], env=env, pool="threads", as_deployed=True
        ),
        "control": start_worker("control", concurrency=1, queues=[""], env=env, as_deployed=True),
    }

    def new_match(seed: int) -> Match:
        return match_create(
            variant_id=short_variant.pk,
            bot_ids=[b.pk for b in hooked_bots],
            seed=seed,
            time_limit_ms=TIME_LIMIT_MS,
        )

    in_play = [new_match(1), new_match(2)]
    ids = [m.pk for m in in_play]
    lock = threading.Lock()
    breaker: list[int] = []
    broker_back = threading.Event()

    def break_the_broker_while_both_play() -> None:
        # The first bot call held here waits for both matches to be in play, then kills Redis
        # and starts it again; every other call waits until it is back.
        if broker_back.is_set():
            return
        with lock:
            first = not breaker
            breaker.append(threading.get_ident())
        if not first:
            broker_back.wait(timeout=300)
            return
        try:
            wait_for(lambda: _count(ids, MatchStatus.RUNNING) == 2, 120, "both matches in play")
            private_redis.kill()
            time.sleep(OUTAGE_SECONDS)  # the outage itself; nothing is asserted about it
            private_redis.start()
        finally:
            connection.close()  # this bot thread's own database connection
            broker_back.set()

    example_bots.before_answer = break_the_broker_while_both_play
    for match, worker in zip(in_play, queues, strict=True):
        _send_through(broker, match, queues[worker])
    wait_for(broker_back.is_set, 240, "the broker to be killed and started again")

    wait_for(
        lambda: _finished_or_a_worker_dead(ids, workers),
        180,
        "the matches in play to finish after the broker came back",
    )
    assert not _dead(workers), f"workers exited during the broker outage: {_dead(workers)}"
    for match in in_play:
        match.refresh_from_db()
        assert match.status == MatchStatus.FINISHED
        assert match.attempts == 1
    assert Replay.objects.filter(match_id__in=ids).count() == 2

    # The workers consume from the broker started again: two more matches are played.
    after = [new_match(3), new_match(4)]
    for match, worker in zip(after, queues, strict=True):
        _send_through(broker, match, queues[worker])
    after_ids = [m.pk for m in after]
    wait_for(
        lambda: _finished_or_a_worker_dead(after_ids, workers),
        180,
        "matches sent after the outage to be played",
    )
    assert not _dead(workers), f"workers exited after the broker outage: {_dead(workers)}"
    assert _count(after_ids, MatchStatus.FINISHED) == 2


def test_a_worker_started_while_the_broker_is_down_connects_once_it_is_up(
    playing_bots, short_variant, start_worker, private_redis
) -> None:
    broker = private_redis.url
    private_redis.kill()
    worker = start_worker(
        "early", concurrency=1, env={"REDIS_URL": broker}, pool="threads", as_deployed=True
    )
    time.sleep(OUTAGE_SECONDS)  # the broker stays down while the worker starts; nothing asserted
    private_redis.start()

    bots = playing_bots(4)
    match = match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=5, time_limit_ms=2000
    )
    _send_through(broker, match)
    workers = {"early": worker}
    wait_for(
        lambda: _finished_or_a_worker_dead([match.pk], workers),
        180,
        "a match played by the worker started before the broker",
    )
    assert not _dead(workers), "the worker started while the broker was down exited"
    assert _count([match.pk], MatchStatus.FINISHED) == 1
