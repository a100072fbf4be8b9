"""Running matches against real HTTP bots: claim once, record once, retry, sweep."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from engine import verify_replay
from tournaments.models import Match, MatchSeat, MatchStatus, Replay, SeatFault, Tournament
from tournaments.services.matches import (
    PlayedMatch,
    claim_token,
    match_claim,
    match_create,
    match_fail_attempt,
    match_heartbeat,
    match_play,
    match_record_outcome,
    match_run,
    match_sweep_stuck,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(playing_bots, short_variant):
    bots = playing_bots(4)
    return match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=11, time_limit_ms=500
    )


def test_a_queued_match_is_played_and_recorded_with_its_replay(queued):
    assert match_run(match_id=queued.pk) == "recorded"
    queued.refresh_from_db()
    assert queued.status == MatchStatus.FINISHED and queued.attempts == 1
    seats = list(MatchSeat.objects.filter(match=queued).order_by("seat"))
    replay = Replay.objects.get(match=queued).data
    assert verify_replay(replay)["finished"] is True
    assert [s.score for s in seats] == replay["totals"]
    assert [s.rank for s in seats] == replay["ranks"]
    assert all(s.bids_total == 3 and s.faults == 0 for s in seats)
    assert not SeatFault.objects.exists()


def test_a_match_is_claimed_by_one_attempt_only(queued):
    first, second = claim_token(), claim_token()
    assert match_claim(match_id=queued.pk, token=first)
    assert not match_claim(match_id=queued.pk, token=second)
    assert match_run(match_id=queued.pk) == "not-claimable"


def test_a_second_delivery_of_a_recorded_match_changes_nothing(queued):
    match_run(match_id=queued.pk)
    before = list(MatchSeat.objects.filter(match=queued).values_list("score", flat=True))
    assert match_run(match_id=queued.pk) == "not-claimable"
    assert Replay.objects.filter(match=queued).count() == 1
    assert list(MatchSeat.objects.filter(match=queued).values_list("score", flat=True)) == before


def test_writing_again_after_a_committed_write_changes_nothing(queued):
    # A try after a commit whose answer was lost with the connection finds the outcome stored.
    token = claim_token()
    assert match_claim(match_id=queued.pk, token=token)
    played = PlayedMatch.from_outcome(queued.pk, match_play(match_id=queued.pk))
    assert match_record_outcome(match_id=queued.pk, token=token, played=played) is True
    before = list(MatchSeat.objects.filter(match=queued).values_list("score", "faults"))
    faults = SeatFault.objects.filter(seat__match=queued).count()
    assert match_record_outcome(match_id=queued.pk, token=token, played=played) is True
    assert match_record_outcome(match_id=queued.pk, token=claim_token(), played=played) is False
    assert Replay.objects.filter(match=queued).count() == 1
    assert SeatFault.objects.filter(seat__match=queued).count() == faults
    assert list(MatchSeat.objects.filter(match=queued).values_list("score", "faults")) == before
    queued.refresh_from_db()
    assert queued.status == MatchStatus.FINISHED


def _swept(match: Match) -> None:
    Match.objects.filter(pk=match.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    match_sweep_stuck(stale_after=timedelta(seconds=30))


def test_a_late_outcome_of_a_swept_attempt_is_recorded_once(queued):
    token = claim_token()
    assert match_claim(match_id=queued.pk, token=token)
    played = PlayedMatch.from_outcome(queued.pk, match_play(match_id=queued.pk))
    _swept(queued)
    assert not match_heartbeat(match_id=queued.pk, token=token)
    queued.refresh_from_db()
    assert queued.status == MatchStatus.QUEUED
    assert match_record_outcome(match_id=queued.pk, token=token, played=played) is True
    queued.refresh_from_db()
    assert queued.status == MatchStatus.FINISHED and queued.error == ""
    assert match_run(match_id=queued.pk) == "not-claimable"
    assert Replay.objects.filter(match=queued).count() == 1
    scores = [s.score for s in played.seats]
    assert list(MatchSeat.objects.filter(match=queued).values_list("score", flat=True)) == scores


def test_the_first_of_two_outcomes_is_kept_and_the_second_changes_nothing(queued):
    first = claim_token()
    assert match_claim(match_id=queued.pk, token=first)
    played = PlayedMatch.from_outcome(queued.pk, match_play(match_id=queued.pk))
    _swept(queued)
    second = claim_token()
    assert match_claim(match_id=queued.pk, token=second)  # played again by another worker
    assert match_record_outcome(match_id=queued.pk, token=first, played=played) is True
    assert not match_heartbeat(match_id=queued.pk, token=second)
    again = PlayedMatch.from_outcome(queued.pk, match_play(match_id=queued.pk))
    assert match_record_outcome(match_id=queued.pk, token=second, played=again) is False
    queued.refresh_from_db()
    assert queued.status == MatchStatus.FINISHED and queued.claimed_by == first
    assert queued.attempts == 2
    assert Replay.objects.filter(match=queued).count() == 1


def test_a_platform_failure_is_retried_then_marked_failed_and_not_blamed_on_bots(queued):
    for attempt in range(1, queued.max_attempts + 1):
        token = claim_token()
        assert match_claim(match_id=queued.pk, token=token)
        status = match_fail_attempt(match_id=queued.pk, token=token, error="broker went away")
        expected = MatchStatus.FAILED if attempt == queued.max_attempts else MatchStatus.QUEUED
        assert status == expected
    queued.refresh_from_db()
    assert queued.status == MatchStatus.FAILED and "broker" in queued.error
    assert not match_claim(match_id=queued.pk, token=claim_token())
    assert MatchSeat.objects.filter(match=queued, faults__gt=0).count() == 0


def test_a_bot_that_breaks_the_protocol_gets_faults_recorded_and_ranks_last(
    playing_bots, short_variant, make_bot, owner, scripted_bot_server
):
    good = playing_bots(3)
    broken = make_bot(owner, endpoint_url=f"{scripted_bot_server}/not-json", status="active")
    match = match_create(
        variant_id=short_variant.pk,
        bot_ids=[broken.pk, *(b.pk for b in good)],
        seed=5,
        time_limit_ms=300,
    )
    assert match_run(match_id=match.pk) == "recorded"
    seat = MatchSeat.objects.get(match=match, bot=broken)
    fault = SeatFault.objects.get(seat=seat)
    assert fault.kind == "not_json" and fault.count == seat.faults and fault.sample
    assert seat.disqualified
    others = MatchSeat.objects.filter(match=match).exclude(bot=broken)
    assert all(s.faults == 0 and not s.disqualified for s in others)


def test_a_match_of_a_paused_tournament_is_not_claimed(queued, organiser, short_variant):
    tournament = Tournament.objects.create(
        name="paused",
        organiser=organiser,
        variant=short_variant,
        format="round_robin",
        status="paused",
    )
    Match.objects.filter(pk=queued.pk).update(tournament=tournament)
    assert not match_claim(match_id=queued.pk, token=claim_token())


def test_the_sweeper_requeues_a_silent_match_and_fails_it_when_out_of_attempts(queued):
    Match.objects.filter(pk=queued.pk).update(max_attempts=1)
    assert match_claim(match_id=queued.pk, token=claim_token())
    Match.objects.filter(pk=queued.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert match_sweep_stuck(stale_after=timedelta(seconds=30)) == {
        "requeued": 0,
        "failed": 1,
        "resent": 0,
    }
    queued.refresh_from_db()
    assert queued.status == MatchStatus.FAILED


def test_retrying_a_failed_match_of_a_finished_tournament_runs_the_tournament_again(
    queued, organiser, short_variant
):
    from tournaments.models import TournamentStatus
    from tournaments.services.matches import match_retry
    from tournaments.services.tournaments import tournament_advance

    tournament = Tournament.objects.create(
        name="done",
        organiser=organiser,
        variant=short_variant,
        format="round_robin",
        status="finished",
        started_at=timezone.now(),
        finished_at=timezone.now(),
    )
    Match.objects.filter(pk=queued.pk).update(
        tournament=tournament, status=MatchStatus.FAILED, finished_at=timezone.now()
    )
    match_retry(match=queued)
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.RUNNING and tournament.finished_at is None
    assert match_run(match_id=queued.pk) == "recorded"
    assert tournament_advance(tournament_id=tournament.pk) == "finished"
