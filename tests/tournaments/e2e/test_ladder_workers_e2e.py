"""The always-on ladder and the queues with real Celery workers, Redis and PostgreSQL.

A bot registered through the API, opted in and verified by a worker, gets rated ladder matches
with nobody starting anything (beat tops the ladder up; each finished match tops it up again);
a backlog of tournament matches does not delay a verification on a control worker.
"""

from __future__ import annotations

import itertools

import pytest

from tests.support.users import client_for, ladder_teams_apart
from tests.support.workers import needs_postgres_and_redis, wait_for
from tournaments.models import (
    Bot,
    BotHealthCheck,
    BotStatus,
    Match,
    MatchSeat,
    MatchStatus,
    RatingHistory,
)
from tournaments.services.bots import bot_verify_soon
from tournaments.services.ladders import ladder_ensure_default
from tournaments.services.matches import match_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]


def _rated_ladder_seats(bot: Bot) -> int:
    return MatchSeat.objects.filter(
        bot=bot, match__ladder__isnull=False, match__status=MatchStatus.FINISHED, match__rated=True
    ).count()


def test_a_new_verified_opted_in_bot_gets_rated_ladder_matches_with_no_staff_action(
    presets, playing_bots, owner, example_bots, start_worker
) -> None:
    ladder = ladder_ensure_default()  # what the migration and seed_presets do
    regulars = playing_bots(3)
    ladder_teams_apart(regulars)  # the newcomer is the owner's
    Bot.objects.filter(pk__in=[b.pk for b in regulars]).update(ladder_opt_in=True)
    start_worker("all", concurrency=2, env={"LADDER_MATCHES_IN_FLIGHT": "1"})
    start_worker("beat", beat=True)

    response = client_for(owner).post(
        "/api/bots/",
        {
            "name": "newcomer",
            "endpoint_url": f"{example_bots.urls['heuristic']}/newcomer",
            "ladder_opt_in": True,
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    newcomer = Bot.objects.get(pk=response.json()["id"])
    wait_for(lambda: Bot.objects.get(pk=newcomer.pk).status == BotStatus.ACTIVE, 60, "verification")
    # Tables one after another, each one match dealt from a seed of its own and rated alone.
    wait_for(lambda: _rated_ladder_seats(newcomer) >= 2, 240, "rated ladder matches")
    played = Match.objects.filter(
        ladder=ladder, seats__bot=newcomer, status=MatchStatus.FINISHED
    ).order_by("pk")[:2]
    assert {m.duplicate_group for m in played} == {""}
    assert {m.rating_group for m in played} == {""}  # rated on its own
    assert len({m.seed for m in played}) == 2
    assert RatingHistory.objects.filter(bot=newcomer).count() >= 2
    # Never two matches at once for a bot: its tables did not overlap.
    spans = []
    for m in played:
        assert m.started_at is not None and m.finished_at is not None
        spans.append((m.started_at, m.finished_at))
    spans.sort()
    assert all(prev[1] <= nxt[0] for prev, nxt in itertools.pairwise(spans))


def test_beat_tops_the_ladder_up_when_no_message_did(presets, playing_bots, start_worker) -> None:
    ladder = ladder_ensure_default()
    bots = playing_bots(4)
    ladder_teams_apart(bots)
    # Opted in behind the services' back: no top-up was ever sent.
    Bot.objects.filter(pk__in=[b.pk for b in bots]).update(ladder_opt_in=True)
    start_worker("all", concurrency=2, env={"LADDER_MATCHES_IN_FLIGHT": "1"})
    start_worker("beat", beat=True)
    wait_for(
        lambda: Match.objects.filter(ladder=ladder, status=MatchStatus.FINISHED).count() >= 4,
        240,
        "ladder matches played",
    )


def test_a_backlog_of_matches_does_not_delay_a_verification(
    presets, playing_bots, oh_hell, start_worker, example_bots
) -> None:
    bots = playing_bots(4)
    for bot in bots:  # the example server answers after a pause on these paths
        bot.endpoint_url = bot.endpoint_url.replace("/b", "/slow/b")
        bot.save(update_fields=["endpoint_url"])
    start_worker("matches", concurrency=1, queues=[".matches"])
    start_worker("control", concurrency=1, queues=[""])
    backlog = [
        match_create(
            variant_id=oh_hell.pk, bot_ids=[b.pk for b in bots], seed=i, time_limit_ms=2000
        )
        for i in range(20)
    ]
    wait_for(
        lambda: Match.objects.filter(status=MatchStatus.RUNNING).exists(), 60, "a match to start"
    )
    pending = bots[0]
    Bot.objects.filter(pk=pending.pk).update(status=BotStatus.PENDING)
    from django.db import transaction

    with transaction.atomic():
        bot_verify_soon(bot=pending)
    wait_for(lambda: BotHealthCheck.objects.filter(bot=pending).exists(), 60, "the verification")
    still_queued = Match.objects.filter(
        pk__in=[m.pk for m in backlog], status=MatchStatus.QUEUED
    ).count()
    # Each match takes seconds with these bots, so most of the backlog is still waiting.
    assert still_queued >= 15
