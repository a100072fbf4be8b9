"""Chaos: a Swiss tournament and a duplicate ladder play on real Celery workers, Redis and
PostgreSQL while workers are killed with SIGKILL, the Redis broker is killed and started again
empty, and every database connection is dropped, twice. Once things settle, every match ended
exactly once (none lost, stuck or recorded twice), the tournament finished, and the live
ratings equal a recompute bit for bit.

Recovery runs as in production, only on a shorter clock: beat sweeps every SWEEP_SECONDS,
a silent match is given back after MATCH_STALE_SECONDS, a lost message is sent again after
MATCH_RESEND_SECONDS (config/settings.py).
"""

from __future__ import annotations

import time
from collections import Counter

import pytest
from django.utils import timezone

from tests.support.rating_world import assert_live_equals_recompute
from tests.support.users import ladder_teams_apart
from tests.support.workers import (
    drop_database_connections,
    kill_worker,
    needs_postgres_and_redis,
    wait_for,
)
from tournaments.models import (
    Bot,
    Ladder,
    Match,
    MatchSeat,
    MatchStatus,
    RatingHistory,
    Replay,
    Tournament,
    TournamentStatus,
)
from tournaments.services.ladders import ladder_pause
from tournaments.services.tournaments import tournament_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]

SWISS_ROUNDS = 4
OUTAGE_SECONDS = 5
# Generous bounds for a loaded machine; each is a deadline for an event, never a sleep.
SETTLE_SECONDS = 600


def _finished() -> int:
    return Match.objects.filter(status=MatchStatus.FINISHED).count()


def _running() -> int:
    return Match.objects.filter(status=MatchStatus.RUNNING).count()


def _progress(at_least: int, what: str) -> None:
    target = _finished() + at_least
    wait_for(lambda: _finished() >= target, SETTLE_SECONDS, what)


def _waiting_group(match: Match) -> bool:
    """A finished ladder rotation or round table whose group still has matches to play (rated
    with them)."""
    together = Match.objects.filter(
        ladder=match.ladder, status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING]
    )
    if match.duplicate_group:
        return together.filter(duplicate_group=match.duplicate_group).exists()
    return match.table_round != "" and together.filter(table_round=match.table_round).exists()


def _settled() -> bool:
    """Nothing in play and every finished match rated, but rotations and round tables waiting
    on a paused ladder."""
    if _running():
        return False
    unrated = Match.objects.filter(status=MatchStatus.FINISHED, rated=False)
    return all(_waiting_group(match) for match in unrated)


def test_matches_end_once_and_ratings_equal_a_recompute_through_kills_and_outages(
    playing_bots, short_variant, organiser, start_worker, private_redis
) -> None:
    players = playing_bots(13)
    for bot in players:  # the example server answers after a pause on these paths
        bot.endpoint_url = bot.endpoint_url.replace("/b", "/slow/b")
        bot.save(update_fields=["endpoint_url"])
    entrants, climbers = players[:8], players[8:]
    ladder_teams_apart(climbers)
    Bot.objects.filter(pk__in=[b.pk for b in climbers]).update(ladder_opt_in=True)
    Ladder.objects.all().delete()  # only this test's ladder, on the short variant
    ladder = Ladder.objects.create(variant=short_variant, time_limit_ms=2000, duplicate=True)
    tournament = tournament_create(
        organiser=organiser,
        name="chaos",
        variant=short_variant,
        format="swiss",
        bot_ids=[b.pk for b in entrants],
        rounds=SWISS_ROUNDS,
        time_limit_ms=2000,
        start_at=timezone.now(),  # beat starts it: this process sends no message
    )
    # Staff marked it rated: its matches are in the rating order with the ladder's.
    Tournament.objects.filter(pk=tournament.pk).update(rated=True)
    env = {
        "REDIS_URL": private_redis.url,
        "SWEEP_SECONDS": "2",
        "MATCH_STALE_SECONDS": "15",
        "MATCH_RESEND_SECONDS": "10",
        "MATCH_MAX_ATTEMPTS": "20",
        "LADDER_MATCHES_IN_FLIGHT": "1",
    }
    began = time.monotonic()
    first = start_worker("first", concurrency=2, env=env)
    second = start_worker("second", concurrency=2, env=env)
    beat = start_worker("beat", beat=True, env=env)

    # 1. A worker killed with matches in play.
    wait_for(lambda: _running() >= 2, SETTLE_SECONDS, "matches of the tournament and the ladder")
    kill_worker(first)
    third = start_worker("third", concurrency=2, env=env)

    # 2. Redis killed (its queues die with it) and every database connection dropped.
    _progress(2, "matches finished after the first kill")
    private_redis.kill()
    drop_database_connections()
    time.sleep(OUTAGE_SECONDS)  # the outage itself; nothing is asserted about it
    private_redis.start()

    # 3. Every database connection dropped again, with matches in play.
    _progress(2, "matches finished after the broker came back")
    wait_for(lambda: _running() >= 1, SETTLE_SECONDS, "a match in play")
    drop_database_connections()

    # 4. Another worker killed with matches in play.
    _progress(1, "matches finished after the connections were dropped")
    wait_for(lambda: _running() >= 1, SETTLE_SECONDS, "a match in play")
    kill_worker(second)
    fourth = start_worker("fourth", concurrency=2, env=env)

    wait_for(
        lambda: Tournament.objects.get(pk=tournament.pk).status == TournamentStatus.FINISHED,
        SETTLE_SECONDS,
        "the tournament to finish",
    )
    wait_for(
        lambda: Match.objects.filter(
            ladder=ladder, status=MatchStatus.FINISHED, rated=True
        ).exists(),
        SETTLE_SECONDS,
        "a rated ladder group",
    )
    ladder_pause(ladder=ladder)
    wait_for(_settled, SETTLE_SECONDS, "matches in play to end and finished ones to be rated")
    survivors = (third, fourth, beat)
    assert all(p.poll() is None for p in survivors), "a worker or beat exited"
    for process in survivors:  # nothing writes while the ratings are recomputed
        kill_worker(process)

    # The tournament: every round played, every match finished once.
    played = Match.objects.filter(tournament=tournament)
    assert played.count() == SWISS_ROUNDS * 2
    assert set(played.values_list("status", flat=True)) == {MatchStatus.FINISHED}
    # No match lost or stuck: nothing failed, nothing in play, queued only behind the pause.
    assert not Match.objects.filter(status__in=[MatchStatus.FAILED, MatchStatus.RUNNING]).exists()
    assert set(
        Match.objects.filter(status=MatchStatus.QUEUED).values_list("ladder", flat=True)
    ) <= {ladder.pk}
    # Recorded once: one replay per finished match and none for the others, every seat scored.
    finished = Match.objects.filter(status=MatchStatus.FINISHED)
    assert Replay.objects.count() == finished.count()
    assert Replay.objects.filter(match__status=MatchStatus.FINISHED).count() == finished.count()
    assert not MatchSeat.objects.filter(match__in=finished, score__isnull=True).exists()
    # Rated once: each rated unit (a match, or a ladder's whole duplicate group) gives one
    # update per bot at its table, at the unit's first sequence number.
    units: dict[str, list[int]] = {}
    rated_as: dict[str, set[str]] = {}
    for pk, sequence, unit, group in Match.objects.filter(rated=True).values_list(
        "pk", "rating_sequence", "rating_group", "duplicate_group"
    ):
        assert sequence is not None  # a rated match has its place in the rating order
        units.setdefault(unit or f"match {pk}", []).append(sequence)
        if group:
            rated_as.setdefault(group, set()).add(unit)
    assert all(len(unit) == 1 for unit in rated_as.values()), rated_as
    history = Counter(
        RatingHistory.objects.filter(match__isnull=False).values_list("sequence", flat=True)
    )
    assert history == {min(sequences): 4 for sequences in units.values()}
    assert set(played.values_list("rated", flat=True)) == {True}
    assert Match.objects.filter(ladder=ladder, rated=True).count() >= 4

    assert_live_equals_recompute()
    replayed = Match.objects.filter(status=MatchStatus.FINISHED, attempts__gt=1).count()
    print(
        f"chaos: {finished.count()} matches finished ({replayed} after a lost attempt), "
        f"{len(units)} rated units, in {time.monotonic() - began:.0f} s"
    )
