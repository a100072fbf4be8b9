"""A match whose outcome can no longer count stops calling its bots (real Celery workers, Redis
and PostgreSQL, slow bots on loopback that record what they are sent).

A full game of the ``oh-hell`` preset between four bots that think 0.15 s a decision lasts about
two minutes. Cancelled, or finished by another attempt, it must end within a heartbeat or two:
the worker (one thread) is then free, which a short match queued behind it shows by finishing.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from tests.tournaments.workers import needs_postgres_and_redis, wait_for
from tournaments.models import (
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    SeatFault,
    TournamentStatus,
    VoidReason,
)
from tournaments.services.matches import match_create, match_run, match_sweep_stuck
from tournaments.services.tournaments import tournament_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]

# The bots must be quiet this soon after the match can no longer count: a few heartbeats.
STOPPED_WITHIN_S = 30
# A whole game takes about two minutes: the worker is free well before only if it stopped.
FREE_WITHIN_S = 60


@pytest.fixture
def slow_and_fast(playing_bots, example_bots):
    """Four bots that think before answering and record what they are sent, and four quick."""
    bots = playing_bots(8)
    for bot in bots[:4]:
        bot.endpoint_url = bot.endpoint_url.replace("/b", "/slow/record/b")
        bot.save(update_fields=["endpoint_url"])
    example_bots.recorded.clear()
    example_bots.arrivals.clear()
    return bots[:4], bots[4:]


def _arrivals(example_bots, match: Match) -> list[float]:
    return [a.at for a in list(example_bots.arrivals) if a.match_id == str(match.pk)]


def _worker_is_free(short_variant, bots) -> None:
    """Queue a short match and wait for the worker to play it: its one thread is free."""
    quick = match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=5, time_limit_ms=2000
    )
    wait_for(
        lambda: Match.objects.filter(pk=quick.pk, status=MatchStatus.FINISHED).exists(),
        FREE_WITHIN_S,
        "the worker to play the next match",
    )


def test_cancelling_a_tournament_stops_its_running_match_and_frees_the_worker(
    organiser, organiser_client, oh_hell, short_variant, slow_and_fast, example_bots, start_worker
):
    slow, fast = slow_and_fast
    start_worker("solo", concurrency=1, pool="threads")
    tournament = tournament_create(
        organiser=organiser,
        name="cut short",
        variant=oh_hell,
        format="round_robin",
        bot_ids=[b.pk for b in slow],
        table_size=4,
        time_limit_ms=2000,
    )
    api = organiser_client
    assert api.post(f"/api/tournaments/{tournament.pk}/start/").status_code == 202
    wait_for(lambda: tournament.matches.exists(), 60, "the tournament's match")
    match = tournament.matches.get()
    wait_for(lambda: len(_arrivals(example_bots, match)) >= 3, 60, "the bots to be called")

    assert api.post(f"/api/tournaments/{tournament.pk}/cancel/").status_code == 200
    cancelled_at = time.monotonic()
    _worker_is_free(short_variant, fast)

    assert _arrivals(example_bots, match)[-1] < cancelled_at + STOPPED_WITHIN_S
    match.refresh_from_db()
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.CANCELLED
    assert match.status == MatchStatus.CANCELLED
    assert not Replay.objects.filter(match=match).exists()
    assert not SeatFault.objects.filter(seat__match=match).exists()
    assert not MatchSeat.objects.filter(match=match, score__isnull=False).exists()


def test_a_match_finished_by_another_attempt_stops_the_first_and_keeps_the_other_outcome(
    oh_hell, short_variant, slow_and_fast, example_bots, start_worker
):
    slow, fast = slow_and_fast
    start_worker("first", concurrency=1, pool="threads")
    match = match_create(
        variant_id=oh_hell.pk, bot_ids=[b.pk for b in slow], seed=3, time_limit_ms=2000
    )
    wait_for(lambda: len(_arrivals(example_bots, match)) >= 3, 60, "the bots to be called")
    first_deal = Match.objects.get(pk=match.pk).seed
    # The sweeper takes the match from the first attempt, whose heartbeat it thinks too old,
    # and another attempt plays it to the end, its bots now answering at once.
    wait_for(
        lambda: match_sweep_stuck(stale_after=timedelta(seconds=1))["requeued"] == 1,
        30,
        "the sweeper to give the match back",
    )
    for bot in slow:
        bot.endpoint_url = bot.endpoint_url.replace("/slow/record/b", "/b")
        bot.save(update_fields=["endpoint_url"])
    assert match_run(match_id=match.pk) == "recorded"
    finished_at = time.monotonic()
    _worker_is_free(short_variant, fast)

    assert _arrivals(example_bots, match)[-1] < finished_at + STOPPED_WITHIN_S
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.attempts == 2
    (replay,) = Replay.objects.filter(match=match)
    assert replay.data["seed"] == match.seed != first_deal
    # The first attempt's deal stays voided: its outcome never came to count.
    (voided,) = match.voided_deals.all()
    assert (voided.seed, voided.reason) == (first_deal, VoidReason.WORKER_LOST)
