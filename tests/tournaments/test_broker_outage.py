"""A real worker rides out a real Redis broker killed and started again on the same port."""

from __future__ import annotations

import time

import pytest
from django.conf import settings

from config.celery_app import app as celery_app
from tests.tournaments.workers import wait_for
from tournaments.models import Match, MatchStatus
from tournaments.services.matches import match_create
from tournaments.tasks import run_match

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.REDIS_URL or settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
        reason="needs PostgreSQL and Redis: set DATABASE_URL and REDIS_URL (./run test does "
        "when they answer on 127.0.0.1)",
    ),
]

OUTAGE_SECONDS = 8


def _send_through(broker_url: str, match: Match) -> None:
    """Send the match to the workers listening on ``broker_url``."""
    with celery_app.connection_for_write(broker_url) as connection:
        run_match.apply_async((match.pk,), connection=connection)


def _finished(match: Match) -> bool:
    return Match.objects.filter(pk=match.pk, status=MatchStatus.FINISHED).exists()


def test_a_worker_survives_the_broker_going_away_and_then_plays_a_match(
    playing_bots, presets, oh_hell, start_worker, private_redis
):
    bots = playing_bots(4)
    broker = private_redis.url
    worker = start_worker("outage", concurrency=1, env={"REDIS_URL": broker})

    def new_match(seed: int) -> Match:
        return match_create(
            variant_id=oh_hell.pk, bot_ids=[b.pk for b in bots], seed=seed, time_limit_ms=500
        )

    first = new_match(1)
    _send_through(broker, first)
    wait_for(lambda: _finished(first), 120, "a match played before the outage")

    private_redis.kill()
    time.sleep(OUTAGE_SECONDS)  # the outage itself; nothing is asserted about it
    assert worker.poll() is None, "the worker exited while the broker was down"
    private_redis.start()

    second = new_match(2)
    _send_through(broker, second)
    wait_for(lambda: _finished(second), 180, "a match played after the broker came back")
    assert worker.poll() is None
