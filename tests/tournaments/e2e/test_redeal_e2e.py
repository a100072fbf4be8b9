"""A match given back after its worker died is dealt anew (real Celery workers, Redis and
PostgreSQL, a bot on loopback that records what it is sent).

The bots of the lost attempt saw part of its deal, so the next attempt must not deal it again;
the voided deal is shown with its seed, which matches the commitment published before.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from engine.game import Game
from engine.observation import observe
from engine.replay import verify_replay
from engine.seeds import seed_matches, seed_sha256
from tests.support.workers import kill_worker, needs_postgres_and_redis, wait_for
from tournaments.models import Match, MatchStatus, Replay
from tournaments.services.matches import match_create
from tournaments.services.sweeps import match_sweep_stuck

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]


def _first_hand(recorded: list[dict[str, Any]]) -> list[str] | None:
    """The hand the recording bot was dealt first: in its first bid of the first deal."""
    for message in list(recorded):
        if message.get("type") == "bid" and message.get("deal") == 1:
            return list(message["hand"])
    return None


def test_a_match_played_again_after_its_worker_died_is_dealt_anew(
    playing_bots, short_variant, example_bots, start_worker
) -> None:
    bots = playing_bots(4)
    for i, bot in enumerate(bots):  # the example server answers after a pause on these paths
        path = "/slow/record/b" if i == 0 else "/slow/b"
        bot.endpoint_url = bot.endpoint_url.replace("/b", path)
        bot.save(update_fields=["endpoint_url"])
    example_bots.recorded.clear()
    doomed = start_worker("doomed", concurrency=1)
    match = match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=11, time_limit_ms=2000
    )
    published = seed_sha256(match.seed)

    # Killed mid-match, once the recording bot has seen its first hand.
    wait_for(lambda: _first_hand(example_bots.recorded) is not None, 60, "the first hand")
    kill_worker(doomed)
    first_hand = _first_hand(example_bots.recorded)
    example_bots.recorded.clear()
    assert Match.objects.get(pk=match.pk).status == MatchStatus.RUNNING
    wait_for(
        lambda: match_sweep_stuck(stale_after=timedelta(seconds=2))["requeued"] == 1,
        30,
        "the sweeper to give the match back",
    )
    start_worker("rescuer", concurrency=1)
    wait_for(
        lambda: Match.objects.filter(pk=match.pk, status=MatchStatus.FINISHED).exists(),
        120,
        "the match to be played again",
    )

    match.refresh_from_db()
    assert match.attempts == 2
    second_hand = _first_hand(example_bots.recorded)
    assert second_hand is not None
    assert second_hand != first_hand, "the second attempt dealt the same cards again"
    assert seed_sha256(match.seed) != published
    # The replay is of the new deal and verifies against the new commitment.
    replay = Replay.objects.get(match=match).data
    assert replay["seed"] == match.seed
    assert verify_replay({**replay, "seed_sha256": seed_sha256(match.seed)})["finished"]
    assert observe(_dealt(match, match.seed), 0)["hand"] == second_hand
    # The voided deal: the published commitment, a seed that matches it and deals the hand the
    # bot saw in the lost attempt.
    (voided,) = match.voided_deals.all()
    assert voided.reason == "worker_lost"
    assert seed_matches(voided.seed, published)
    assert observe(_dealt(match, voided.seed), 0)["hand"] == first_hand


def _dealt(match: Match, seed: int) -> Game:
    """The game the match's variant deals from ``seed``, at its first deal."""
    return Game(match.variant.to_engine(), match.seats.count(), seed)
