"""Queued matches whose broker message was lost are sent again within minutes, and only as
many as their queue lacks: a backlog being worked through is not sent twice, and a queue's
other messages are not taken for matches (real Redis)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.workers import (
    broker_queue,
    needs_postgres_and_redis,
    purge_queue,
    queue_length,
    wait_for,
)
from tournaments.models import Ladder, Match, MatchStatus
from tournaments.services.matches import match_create
from tournaments.services.sweeps import match_sweep_stuck
from tournaments.tasks import run_match, top_up_ladders

pytestmark = [
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]


@pytest.fixture
def queue_matches(playing_bots, short_variant, queue):
    """Queue ``n`` matches on the test's private queues."""
    bots = playing_bots(4)

    def make(n: int, **fields: object) -> list[Match]:
        return [
            match_create(
                variant_id=short_variant.pk,
                bot_ids=[b.pk for b in bots],
                seed=100 + i,
                time_limit_ms=500,
                **fields,
            )
            for i in range(n)
        ]

    return make


def _queued_for(matches: list[Match], age: timedelta) -> None:
    """Make the matches look queued for ``age``."""
    Match.objects.filter(pk__in=[m.pk for m in matches]).update(updated_at=timezone.now() - age)


def test_a_backlog_with_all_its_messages_is_not_sent_again(queue_matches) -> None:
    backlog = queue_matches(3)
    matches_queue = broker_queue("matches")
    assert queue_length(matches_queue) == 3
    _queued_for(backlog, timedelta(hours=1))
    assert match_sweep_stuck()["resent"] == 0
    assert queue_length(matches_queue) == 3


def test_only_the_messages_a_queue_lacks_are_sent_again_once(queue_matches) -> None:
    backlog = queue_matches(3)
    matches_queue = broker_queue("matches")
    purge_queue(matches_queue)  # the broker lost every message
    run_match.delay(backlog[0].pk)  # one of them was sent again by hand
    _queued_for(backlog, timedelta(minutes=2))
    assert match_sweep_stuck()["resent"] == 2
    assert queue_length(matches_queue) == 3
    # Each waits the full time before it can be sent again, and nothing is missing now.
    _queued_for(backlog, timedelta(hours=1))
    assert match_sweep_stuck()["resent"] == 0
    assert queue_length(matches_queue) == 3


def test_a_lost_ladder_match_is_sent_again_while_ladder_top_ups_wait(
    queue_matches, short_variant
) -> None:
    ladder = Ladder.objects.create(variant=short_variant, duplicate=False)
    (match,) = queue_matches(1, ladder=ladder)
    ladder_queue = broker_queue("ladder")
    assert queue_length(ladder_queue) == 1
    purge_queue(ladder_queue)  # the broker lost the match's message
    for _ in range(3):  # top-ups sent by finished matches and beat, not yet taken by a worker
        top_up_ladders.delay()
    _queued_for([match], timedelta(minutes=2))
    assert match_sweep_stuck()["resent"] == 1
    assert queue_length(ladder_queue) == 1
    # The top-ups wait with the control tasks, where a match backlog does not hold them up.
    assert queue_length(broker_queue("")) == 3


def test_a_match_whose_message_was_lost_is_played_within_minutes(
    queue_matches, start_worker
) -> None:
    (match,) = queue_matches(1)
    purge_queue(broker_queue("matches"))  # lost before any worker took it
    _queued_for([match], timedelta(minutes=2))
    start_worker("rescuer", concurrency=1)
    start_worker("beat", beat=True, env={"SWEEP_SECONDS": "2"})
    wait_for(
        lambda: Match.objects.filter(pk=match.pk, status=MatchStatus.FINISHED).exists(),
        240,
        "the lost match to be sent again and played",
    )
