"""Recompute jobs: a request answers at once, a job whose worker died is resumed or failed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from tests.support.rating_world import World, rating_snapshot
from tests.support.workers import database_url, kill_worker, wait_for
from tournaments.models import RatingRecompute, RecomputeStatus
from tournaments.services.rating_writer import RATING_LOCK_KEY
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.recompute import recomputes_sweep_stale

URL = "/api/ratings/recompute/"
on_postgres_and_redis = pytest.mark.skipif(
    not settings.REDIS_URL or connection.vendor == "sqlite",
    reason="needs PostgreSQL and Redis: set DATABASE_URL and REDIS_URL",
)


def _running(beat_ago: timedelta, attempts: int = 1) -> RatingRecompute:
    now = timezone.now()
    return RatingRecompute.objects.create(
        status=RecomputeStatus.RUNNING,
        started_at=now - beat_ago,
        heartbeat_at=now - beat_ago,
        attempts=attempts,
        claimed_by="gone-host:1:abc",
    )


@pytest.mark.django_db
class TestRequests:
    def test_a_request_while_one_runs_is_a_409_naming_it(self, staff_client) -> None:
        job = _running(timedelta(seconds=1))
        response = staff_client.post(URL)
        assert response.status_code == 409
        error = response.json()["error"]
        assert error["code"] == "conflict" and f"recompute {job.pk}" in error["message"]
        assert error["detail"]["recompute"]["id"] == job.pk
        assert error["detail"]["recompute"]["status"] == "running"
        assert RatingRecompute.objects.count() == 1

    def test_a_job_whose_worker_stopped_beating_is_queued_again_and_named(
        self, staff_client
    ) -> None:
        job = _running(timedelta(minutes=10))
        response = staff_client.post(URL)
        assert response.status_code == 409
        assert response.json()["error"]["detail"]["recompute"]["id"] == job.pk
        job.refresh_from_db()
        assert job.status == RecomputeStatus.QUEUED and job.attempts == 1
        assert RatingRecompute.objects.count() == 1

    def test_a_job_stale_after_its_last_attempt_fails_and_a_new_one_is_queued(
        self, staff_client
    ) -> None:
        job = _running(timedelta(minutes=10), attempts=settings.RECOMPUTE_MAX_ATTEMPTS)
        response = staff_client.post(URL)
        assert response.status_code == 202
        assert response.json()["id"] != job.pk and response.json()["status"] == "queued"
        job.refresh_from_db()
        assert job.status == RecomputeStatus.FAILED and "stopped" in job.error

    def test_the_sweep_leaves_a_job_that_beats_alone(self) -> None:
        job = _running(timedelta(seconds=1))
        assert recomputes_sweep_stale() == {"resumed": 0, "failed": 0}
        job.refresh_from_db()
        assert job.status == RecomputeStatus.RUNNING


@pytest.fixture
def rating_lock() -> Iterator[psycopg.Connection]:
    """Another connection holding the rating lock, as a long recompute does."""
    with psycopg.connect(database_url()) as other:
        other.execute("SELECT pg_advisory_xact_lock(%s)", [RATING_LOCK_KEY])
        yield other
        other.rollback()


@on_postgres_and_redis
@pytest.mark.django_db(transaction=True)
def test_a_request_answers_at_once_while_a_recompute_holds_the_rating_lock(
    staff_client, rating_lock
) -> None:
    job = _running(timedelta(seconds=1))
    with connection.cursor() as cursor:  # waiting on the lock would fail here, not hang
        cursor.execute("SET lock_timeout = '5s'")
    try:
        response = staff_client.post(URL)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
    assert response.status_code == 409
    assert response.json()["error"]["detail"]["recompute"]["id"] == job.pk


@pytest.mark.slow
@on_postgres_and_redis
@pytest.mark.django_db(transaction=True)
def test_a_recompute_whose_worker_was_killed_is_resumed_and_gives_the_live_ratings(
    staff_client, organiser, oh_hell, make_bot, owner, start_worker, rating_lock
) -> None:
    world = World.create(organiser=organiser, variant=oh_hell)
    bots = [make_bot(owner, status="active") for _ in range(4)]
    for i, match in enumerate([*world.group(bots[:3], "0.0"), world.single(bots[1:])]):
        world.finish(match, minute=i, seed=i)
    rating_lock.rollback()  # rate live first, then hold the lock again against the recompute
    assert ratings_apply_pending() == 4
    live = rating_snapshot()
    rating_lock.execute("SELECT pg_advisory_xact_lock(%s)", [RATING_LOCK_KEY])

    doomed = start_worker("doomed", concurrency=1)
    try:
        response = staff_client.post(URL)
        assert response.status_code == 202
        job = RatingRecompute.objects.get(pk=response.json()["id"])
        wait_for(
            lambda: RatingRecompute.objects.filter(
                pk=job.pk, status=RecomputeStatus.RUNNING
            ).exists(),
            60,
            "the worker to start the recompute (it then waits for the rating lock)",
        )
    finally:
        kill_worker(doomed)
    again = staff_client.post(URL)  # the lock is still held: answered at once, naming the job
    assert again.status_code == 409
    assert again.json()["error"]["detail"]["recompute"]["id"] == job.pk
    rating_lock.rollback()

    wait_for(
        lambda: recomputes_sweep_stale(stale_after=timedelta(seconds=2))["resumed"] == 1,
        60,
        "the dead worker's recompute to be noticed and queued again",
    )
    rescuer = start_worker("rescuer", concurrency=1)
    try:
        wait_for(
            lambda: RatingRecompute.objects.filter(
                pk=job.pk, status=RecomputeStatus.FINISHED
            ).exists(),
            120,
            "the resumed recompute to finish",
        )
    finally:
        kill_worker(rescuer)
    job.refresh_from_db()
    assert job.attempts == 2 and job.done == 4
    assert rating_snapshot() == live
