"""End to end with real Celery worker processes, real Redis and real PostgreSQL.

Matches are queued through the broker, played against real HTTP bots on loopback and recorded;
a worker killed with SIGKILL mid-match leaves the match to be played again and recorded once;
two workers finishing many matches at the same moment give exactly the ratings of a sequential
replay; a rating writer killed mid-transaction leaves nothing half-applied.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings

from tests.support.workers import database_url, kill_worker, needs_postgres_and_redis, wait_for
from tournaments.models import Match, MatchSeat, MatchStatus, Rating, RatingHistory, Replay
from tournaments.services.matches import match_create
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.recompute import ratings_recompute
from tournaments.services.sweeps import match_sweep_stuck
from tournaments.tasks import rate_finished_matches, run_match

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]


@pytest.fixture
def table(playing_bots, presets):
    """A short variant and four active bots served over HTTP."""
    from tests.support.users import make_user
    from tournaments.services.variants import variant_create

    variant = variant_create(
        user=make_user("e2e-staff", is_staff=True),
        name="e2e-short",
        base="oh-hell",
        options={"max_cards": 3, "order": "down"},
    )
    return variant, playing_bots(6)


def _queue_matches(variant, bots, count: int, time_limit_ms: int = 500) -> list[Match]:
    matches = []
    for i in range(count):
        seats = [bots[(i + k) % len(bots)].pk for k in range(4)]
        matches.append(
            match_create(
                variant_id=variant.pk, bot_ids=seats, seed=1000 + i, time_limit_ms=time_limit_ms
            )
        )
    return matches


def _finished(ids: list[int]) -> int:
    return Match.objects.filter(pk__in=ids, status=MatchStatus.FINISHED, rated=True).count()


def test_queued_matches_are_run_by_a_worker_recorded_and_rated(table, start_worker) -> None:
    variant, bots = table
    start_worker("solo")
    matches = _queue_matches(variant, bots, 3)
    ids = [m.pk for m in matches]
    wait_for(lambda: _finished(ids) == 3, 90, "three matches recorded and rated")
    assert Replay.objects.filter(match_id__in=ids).count() == 3
    assert MatchSeat.objects.filter(match_id__in=ids, score__isnull=True).count() == 0
    assert RatingHistory.objects.filter(match_id__in=ids).count() == 12


def test_a_worker_killed_mid_match_leaves_it_to_be_run_again_and_recorded_once(
    table, start_worker, example_bots
) -> None:
    variant, bots = table
    slow_bots = bots[:4]
    for bot in slow_bots:  # the example server answers after a pause on these paths
        bot.endpoint_url = bot.endpoint_url.replace("/b", "/slow/b")
        bot.save(update_fields=["endpoint_url"])
    doomed = start_worker("doomed", concurrency=1)
    (match,) = _queue_matches(variant, slow_bots, 1, time_limit_ms=2000)
    wait_for(
        lambda: Match.objects.filter(pk=match.pk, status=MatchStatus.RUNNING).exists(),
        60,
        "the match to start",
    )
    time.sleep(0.5)
    kill_worker(doomed)
    assert Match.objects.get(pk=match.pk).status == MatchStatus.RUNNING
    wait_for(
        lambda: match_sweep_stuck(stale_after=timedelta(seconds=2))["requeued"] == 1,
        30,
        "the sweeper to give the match back",
    )
    start_worker("rescuer", concurrency=1)
    wait_for(lambda: _finished([match.pk]) == 1, 120, "the match to be run again")
    match.refresh_from_db()
    assert match.attempts == 2
    assert Replay.objects.filter(match=match).count() == 1
    assert RatingHistory.objects.filter(match=match).count() == 4


def test_two_workers_finishing_many_matches_give_the_ratings_of_a_sequential_replay(
    table, start_worker
) -> None:
    variant, bots = table
    start_worker("left")
    start_worker("right")
    matches = _queue_matches(variant, bots, 16)
    ids = [m.pk for m in matches]
    wait_for(lambda: _finished(ids) == 16, 180, "sixteen matches recorded and rated")
    played = Match.objects.filter(pk__in=ids).order_by("rating_sequence")
    sequences = list(played.values_list("rating_sequence", flat=True))
    assert sequences == list(range(1, 17))
    live = list(Rating.objects.order_by("bot_id").values_list("bot_id", "mu", "sigma", "matches"))
    assert ratings_recompute() == 16
    replayed = list(
        Rating.objects.order_by("bot_id").values_list("bot_id", "mu", "sigma", "matches")
    )
    assert replayed == live

    # A redelivered task changes nothing: wait for the workers to report each one done.
    replayed_match = run_match.apply_async((ids[0],), ignore_result=False)
    assert replayed_match.get(timeout=120) == "not-claimable"
    rated_again = rate_finished_matches.apply_async(ignore_result=False)
    assert rated_again.get(timeout=120) == 0
    assert Replay.objects.filter(match_id__in=ids).count() == 16
    assert RatingHistory.objects.filter(match_id__in=ids).count() == 64
    after = list(Rating.objects.order_by("bot_id").values_list("bot_id", "mu", "sigma", "matches"))
    assert after == live


def test_a_rating_writer_killed_inside_its_transaction_leaves_nothing_applied(oh_hell) -> None:
    from tests.support.users import make_user
    from tournaments.models import Bot

    owner = make_user("rating-owner")
    bots = [
        Bot.objects.create(
            owner=owner,
            name=f"rk-{i}",
            endpoint_url="https://x.example/",
            secret="s",
            status="active",
        )
        for i in range(4)
    ]
    variant = oh_hell
    from django.utils import timezone

    for i in range(5):
        match = Match.objects.create(
            variant=variant,
            status=MatchStatus.FINISHED,
            finished_at=timezone.now(),
            started_at=timezone.now(),
        )
        for seat, bot in enumerate(bots):
            MatchSeat.objects.create(match=match, seat=seat, bot=bot, score=(seat * 7 + i) % 11)
    script = textwrap.dedent(
        """
        import time, django
        django.setup()
        from django.db import transaction
        from tournaments.services.ratings import _apply_batch
        with transaction.atomic():
            print("applied", _apply_batch(500), flush=True)
            time.sleep(120)
        """
    )
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    writer = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "applied 5"
    os.killpg(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    assert not Rating.objects.exists() and not RatingHistory.objects.exists()
    assert Match.objects.filter(rated=True).count() == 0
    assert ratings_apply_pending() == 5
    assert RatingHistory.objects.count() == 20
