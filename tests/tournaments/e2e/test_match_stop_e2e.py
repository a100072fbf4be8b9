"""A match stops calling its bots only once its outcome can no longer count (real Celery
workers, Redis and PostgreSQL, bots on loopback that record what they are sent).

A full game of the ``oh-hell`` preset between four bots that think 0.15 s a decision lasts about
two minutes. Finished by another attempt, it must end within a heartbeat or two: the worker (one
thread) is then free, which a short match queued behind it shows by finishing. Cancelling its
tournament is no such end: a running match is played to the end and counts, whoever cancels.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from arena.protocol import MessageType
from tests.support.workers import needs_postgres_and_redis, wait_for
from tournaments.models import (
    BotStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    Replay,
    Tournament,
    TournamentStatus,
    VoidReason,
)
from tournaments.services.matches import match_create
from tournaments.services.runs import match_run
from tournaments.services.sweeps import match_sweep_stuck
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
# The longest the organiser's bot holds its answer while the tournament is cancelled.
HOLD_S = 30
# A short game, once its held answer is given, is played, recorded and rated well within this.
PLAYED_ON_WITHIN_S = 120


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


@pytest.fixture
def organisers_table(organiser, make_bot, playing_bots, example_bots):
    """The organiser's own bot, which records what it is sent and passes each answer through
    ``example_bots.before_answer``, and three bots of another owner that accepts invitations."""
    mine = make_bot(
        organiser,
        endpoint_url=f"{example_bots.urls['heuristic']}/hook/record/b0",
        status=BotStatus.ACTIVE,
    )
    others = playing_bots(3)
    example_bots.recorded.clear()
    example_bots.arrivals.clear()
    yield [mine, *others]
    example_bots.before_answer = None


@pytest.mark.parametrize("kind", [MessageType.PLAY, MessageType.RESULT])
def test_an_organiser_cannot_void_a_running_match_by_cancelling_its_tournament(
    kind, organiser, organiser_client, short_variant, organisers_table, example_bots, start_worker
) -> None:
    # The organiser's bot knows the running score mid-game, and the final totals and ranks at
    # the result message, sent before the outcome is written. It holds its answer there while
    # the organiser cancels the tournament: the match must still be played to the end and count.
    mine = organisers_table[0]
    held = threading.Event()
    cancelled = threading.Event()

    def hold_until_cancelled() -> None:
        recorded = example_bots.recorded
        if held.is_set() or not recorded or recorded[-1].get("type") != kind:
            return
        held.set()
        cancelled.wait(HOLD_S)

    example_bots.before_answer = hold_until_cancelled
    start_worker("solo", concurrency=2, pool="threads")
    tournament = tournament_create(
        organiser=organiser,
        name="called off",
        variant=short_variant,
        format="round_robin",
        bot_ids=[b.pk for b in organisers_table],
        table_size=4,
        time_limit_ms=HOLD_S * 2000,
    )
    # Staff marked it rated, so its match counts on the public leaderboard once played.
    Tournament.objects.filter(pk=tournament.pk).update(rated=True)
    api = organiser_client
    assert api.post(f"/api/tournaments/{tournament.pk}/start/").status_code == 202
    wait_for(held.is_set, 120, f"the organiser's bot to be sent a {kind} message")
    match = tournament.matches.get()
    try:
        assert api.post(f"/api/tournaments/{tournament.pk}/cancel/").status_code == 200
    finally:
        cancelled.set()

    wait_for(
        lambda: Match.objects.filter(pk=match.pk, status=MatchStatus.FINISHED, rated=True).exists(),
        PLAYED_ON_WITHIN_S,
        "the match to be played to the end, recorded and rated",
    )
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.CANCELLED
    assert [m["type"] for m in example_bots.recorded].count(MessageType.RESULT) == 1
    (replay,) = Replay.objects.filter(match=match)
    assert replay.data["seed"] == Match.objects.get(pk=match.pk).seed
    assert MatchSeat.objects.filter(match=match, score__isnull=False).count() == 4
    assert Rating.objects.get(bot=mine, variant=short_variant).matches == 1


def test_a_match_finished_by_another_attempt_stops_the_first_and_keeps_the_other_outcome(
    oh_hell, short_variant, slow_and_fast, example_bots, start_worker
) -> None:
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
