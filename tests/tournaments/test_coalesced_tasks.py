"""Ladder top-ups and rating writes are coalesced: while one waits in the broker, asking again
sends nothing, and once it starts the next request is sent (real Redis)."""

from __future__ import annotations

import pytest

from tests.support.workers import broker_queue, needs_postgres_and_redis, queue_length
from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.tasks import rate_finished_matches, top_up_ladders

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgres_and_redis]


@pytest.mark.parametrize(
    ("task", "run"),
    [(Task.RATE_FINISHED_MATCHES, rate_finished_matches), (Task.TOP_UP_LADDERS, top_up_ladders)],
)
def test_one_waiting_run_stands_for_every_request_until_it_starts(queue, task, run) -> None:
    control = broker_queue("")
    for _ in range(5):
        dispatch.send(task)  # no transaction: sent (or joined) at once
    assert queue_length(control) == 1
    run()  # a worker takes the waiting one: what is asked from now on is sent anew
    dispatch.send(task)
    dispatch.send(task)
    assert queue_length(control) == 2


def test_tasks_with_arguments_are_each_sent(queue) -> None:
    matches = broker_queue("matches")
    for match_id in (10**9, 10**9 + 1):
        dispatch.send(Task.RUN_MATCH, match_id)
    assert queue_length(matches) == 2
