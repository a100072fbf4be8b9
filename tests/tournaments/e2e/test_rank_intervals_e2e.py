"""A recompute run by a real worker is followed by a batch fit, sent to the bulk queue."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection

from tests.support.rating_world import World
from tests.support.workers import wait_for
from tournaments.models import RankFit, RankInterval, RatingRecompute, RecomputeStatus
from tournaments.services.ratings import ratings_apply_pending

on_postgres_and_redis = pytest.mark.skipif(
    not settings.REDIS_URL or connection.vendor == "sqlite",
    reason="needs PostgreSQL and Redis: set DATABASE_URL and REDIS_URL",
)


@on_postgres_and_redis
@pytest.mark.django_db(transaction=True)
def test_a_recompute_on_a_control_worker_is_followed_by_a_fit_on_a_bulk_worker(
    staff_client, organiser, oh_hell, make_bot, owner, start_worker
) -> None:
    world = World.create(organiser=organiser, variant=oh_hell)
    bots = [make_bot(owner, status="active") for _ in range(4)]
    for i in range(12):
        world.finish(world.single(bots), minute=i, seed=i)
    assert ratings_apply_pending() == 12
    start_worker("control", concurrency=1, queues=[""])
    # The fit holds its worker for seconds, so it never waits in front of control work.
    start_worker("bulk", concurrency=1, queues=[".bulk"], env={"RANK_INTERVALS_RESAMPLES": "20"})

    response = staff_client.post("/api/ratings/recompute/")
    assert response.status_code == 202
    job_id = response.json()["id"]
    wait_for(
        lambda: RankFit.objects.filter(variant=oh_hell).exists(),
        120,
        "the worker to recompute, then fit the batch ranks",
    )
    assert RatingRecompute.objects.get(pk=job_id).status == RecomputeStatus.FINISHED
    fit = RankFit.objects.get(variant=oh_hell)
    assert fit.matches == 12 and fit.resamples == 20
    matches = RankInterval.objects.filter(fit=fit).values_list("matches", flat=True)
    assert sorted(matches) == [12] * 4
