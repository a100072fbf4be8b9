"""Scrimmages on their own queue (real Redis and workers): their messages never sit in the
tournament or ladder queues, a lost one is sent again to the scrimmage queue, and a worker
consuming only that queue plays them, reference players in-process, with replays and
results like any match; one account's slow series never holds the lane from another's."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.users import make_confirmed_user
from tests.support.workers import (
    broker_queue,
    needs_postgres_and_redis,
    purge_queue,
    queue_length,
    wait_for,
)
from tournaments.models import Bot, Match, MatchStatus, Replay, Scrimmage
from tournaments.services.scrimmages import ScrimmageRequest, scrimmage_cancel, scrimmage_create
from tournaments.services.sweeps import match_sweep_stuck

pytestmark = [
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]


@pytest.fixture
def ask(playing_bots, owner, short_variant, queue):
    """Ask, as the owner, for a scrimmage of ``n`` matches of an HTTP bot against an HTTP bot
    of the owner's and two reference players, on the test's private queues."""

    def make(n: int) -> Scrimmage:
        mine, other = playing_bots(2)
        return scrimmage_create(
            owner=owner,
            request=ScrimmageRequest(
                bot_id=mine.pk,
                variant=short_variant,
                matches=n,
                opponent_ids=[other.pk],
                reference_players=["random", "search"],
                time_limit_ms=500,
            ),
        )

    return make


def test_a_scrimmages_matches_wait_on_the_scrimmage_queue_only(ask) -> None:
    ask(3)
    assert queue_length(broker_queue("scrimmage")) == 3
    assert queue_length(broker_queue("matches")) == 0
    assert queue_length(broker_queue("ladder")) == 0


def test_a_lost_scrimmage_message_is_sent_again_to_the_scrimmage_queue(ask) -> None:
    scrimmage = ask(2)
    purge_queue(broker_queue("scrimmage"))  # the broker lost the messages
    Match.objects.filter(scrimmage=scrimmage).update(
        updated_at=timezone.now() - timedelta(minutes=2)
    )
    assert match_sweep_stuck()["resent"] == 2
    assert queue_length(broker_queue("scrimmage")) == 2
    assert queue_length(broker_queue("matches")) == 0


def test_a_worker_of_the_scrimmage_queue_alone_plays_a_scrimmage(ask, start_worker) -> None:
    scrimmage = ask(2)
    start_worker("scrimmages", concurrency=1, queues=[".scrimmage"])
    wait_for(
        lambda: Match.objects.filter(scrimmage=scrimmage, status=MatchStatus.FINISHED).count() == 2,
        240,
        "the scrimmage's matches to be played by the scrimmage worker",
    )
    for match in Match.objects.filter(scrimmage=scrimmage):
        seats = list(match.seats.select_related("bot"))
        assert all(s.score is not None and s.rank is not None for s in seats)
        assert Replay.objects.filter(match=match).exists()
        house = [s for s in seats if s.bot.reference_player]
        assert len(house) == 2 and all(s.faults == 0 for s in house)
    assert Bot.objects.get(reference_player="search").status == "active"


def test_another_owners_first_match_starts_while_one_owner_floods_the_lane_with_slow_matches(
    make_bot, owner, example_bots, loopback_allowed, short_variant, start_worker
) -> None:
    # Every call to these two bots takes 0.15 s (the /slow/ paths): legal, but slow.
    slow = [
        make_bot(owner, endpoint_url=f"{example_bots.urls['random']}/slow/a{i}", status="active")
        for i in range(2)
    ]
    flood = scrimmage_create(
        owner=owner,
        request=ScrimmageRequest(
            bot_id=slow[0].pk,
            variant=short_variant,
            matches=10,
            opponent_ids=[slow[1].pk],
            reference_players=["random"],
        ),
    )
    start_worker("scrimmages", concurrency=3, queues=[".scrimmage"], pool="threads")
    wait_for(
        lambda: flood.matches.filter(status=MatchStatus.RUNNING).exists(),
        240,
        "the flood to take the lane",
    )
    someone = make_confirmed_user("someone")
    fast = [
        make_bot(someone, endpoint_url=f"{example_bots.urls['random']}/b{i}", status="active")
        for i in range(2)
    ]
    first = scrimmage_create(
        owner=someone,
        request=ScrimmageRequest(
            bot_id=fast[0].pk,
            variant=short_variant,
            matches=1,
            opponent_ids=[fast[1].pk],
            reference_players=["random"],
        ),
    )
    wait_for(
        lambda: first.matches.filter(status=MatchStatus.FINISHED).exists(),
        240,
        "the other owner's match to be played",
    )
    # It was played while most of the flood still waited its turn.
    assert flood.matches.filter(status=MatchStatus.QUEUED).count() >= 5
    scrimmage_cancel(scrimmage=flood, by=owner)
