"""Running matches against real HTTP bots: claim once, record once, retry, sweep."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from engine import verify_replay
from engine.seeds import seed_matches, seed_sha256
from tests.support.starting import play_one_match_cup
from tournaments.leases import claim_token
from tournaments.models import (
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    SeatFault,
    Tournament,
    TournamentStatus,
    VoidedDeal,
    VoidReason,
)
from tournaments.services.matches import (
    match_claim,
    match_create,
    match_fail_attempt,
    match_heartbeat,
    match_retry,
)
from tournaments.services.outcomes import PlayedMatch, match_record_outcome
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.runs import match_play, match_run
from tournaments.services.sweeps import match_sweep_stuck
from tournaments.services.tournaments import tournament_cancel

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(playing_bots, short_variant):
    bots = playing_bots(4)
    return match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=11, time_limit_ms=500
    )


def test_a_queued_match_is_played_and_recorded_with_its_replay(queued) -> None:
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


def test_a_match_is_claimed_by_one_attempt_only(queued) -> None:
    first, second = claim_token(), claim_token()
    assert match_claim(match_id=queued.pk, token=first)
    assert not match_claim(match_id=queued.pk, token=second)
    assert match_run(match_id=queued.pk) == "not-claimable"


def test_a_second_delivery_of_a_recorded_match_changes_nothing(queued) -> None:
    match_run(match_id=queued.pk)
    before = list(MatchSeat.objects.filter(match=queued).values_list("score", flat=True))
    assert match_run(match_id=queued.pk) == "not-claimable"
    assert Replay.objects.filter(match=queued).count() == 1
    assert list(MatchSeat.objects.filter(match=queued).values_list("score", flat=True)) == before


def test_writing_again_after_a_committed_write_changes_nothing(queued) -> None:
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


@pytest.fixture
def rotation(playing_bots, short_variant):
    """A rotation of a duplicate group, which keeps the group's deal when given back."""
    bots = playing_bots(4)
    return match_create(
        variant_id=short_variant.pk,
        bot_ids=[b.pk for b in bots],
        seed=11,
        time_limit_ms=500,
        duplicate_group="g1",
    )


def test_a_match_given_back_is_dealt_anew_and_its_voided_deal_shown(queued) -> None:
    dealt, published = [queued.seed], []
    for reason in (VoidReason.PLATFORM_ERROR, VoidReason.WORKER_LOST):
        published.append(seed_sha256(queued.seed))
        token = claim_token()
        assert match_claim(match_id=queued.pk, token=token)  # no bot called yet: harmless
        if reason == VoidReason.PLATFORM_ERROR:
            error = "OperationalError('server closed the connection at db-7.internal')"
            assert match_fail_attempt(match_id=queued.pk, token=token, error=error) == "queued"
        else:
            _swept(queued)
        queued.refresh_from_db()
        assert queued.status == MatchStatus.QUEUED and queued.seed not in dealt
        dealt.append(queued.seed)
    voided = list(VoidedDeal.objects.filter(match=queued).order_by("voided_at", "pk"))
    assert [(v.seed, v.reason) for v in voided] == [
        (dealt[0], VoidReason.PLATFORM_ERROR),
        (dealt[1], VoidReason.WORKER_LOST),
    ]
    assert all(seed_matches(v.seed, c) for v, c in zip(voided, published, strict=True))
    assert match_run(match_id=queued.pk) == "recorded"
    queued.refresh_from_db()
    assert Replay.objects.get(match=queued).data["seed"] == queued.seed == dealt[2]


def test_a_failed_match_is_dealt_anew_for_a_retry_by_staff(queued) -> None:
    Match.objects.filter(pk=queued.pk).update(max_attempts=1)
    token = claim_token()
    assert match_claim(match_id=queued.pk, token=token)
    voided = queued.seed
    assert match_fail_attempt(match_id=queued.pk, token=token, error="boom") == "failed"
    queued.refresh_from_db()
    assert queued.status == MatchStatus.FAILED and queued.seed != voided
    assert VoidedDeal.objects.get(match=queued).seed == voided
    fresh = queued.seed
    match_retry(match=queued)
    assert match_run(match_id=queued.pk) == "recorded"
    assert Replay.objects.get(match=queued).data["seed"] == fresh


@pytest.mark.parametrize("kind", ["queued", "rotation"])
def test_a_late_outcome_of_a_swept_attempt_is_recorded_once(kind, request) -> None:
    match = request.getfixturevalue(kind)
    token = claim_token()
    assert match_claim(match_id=match.pk, token=token)
    played = PlayedMatch.from_outcome(match.pk, match_play(match_id=match.pk))
    _swept(match)
    match.refresh_from_db()
    assert match.status == MatchStatus.QUEUED
    assert match_record_outcome(match_id=match.pk, token=token, played=played) is True
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.error == ""
    assert match_run(match_id=match.pk) == "not-claimable"
    assert Replay.objects.filter(match=match).count() == 1
    assert Replay.objects.get(match=match).data["seed"] == match.seed == played.seed
    scores = [s.score for s in played.seats]
    assert list(MatchSeat.objects.filter(match=match).values_list("score", flat=True)) == scores


@pytest.mark.parametrize("kind", ["queued", "rotation"])
def test_the_first_of_two_outcomes_is_kept_and_the_second_changes_nothing(kind, request) -> None:
    match = request.getfixturevalue(kind)
    first = claim_token()
    assert match_claim(match_id=match.pk, token=first)
    played = PlayedMatch.from_outcome(match.pk, match_play(match_id=match.pk))
    _swept(match)
    second = claim_token()
    assert match_claim(match_id=match.pk, token=second)  # played again by another worker
    assert match_record_outcome(match_id=match.pk, token=first, played=played) is True
    assert not match_heartbeat(match_id=match.pk, token=second)
    again = PlayedMatch.from_outcome(match.pk, match_play(match_id=match.pk))
    assert match_record_outcome(match_id=match.pk, token=second, played=again) is False
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.claimed_by == first
    assert match.attempts == 2
    assert Replay.objects.filter(match=match).count() == 1


def test_an_attempt_that_lost_its_claim_beats_on_for_nobody_until_its_match_has_ended(
    queued,
) -> None:
    first = claim_token()
    assert match_claim(match_id=queued.pk, token=first)
    _swept(queued)
    swept_beat = Match.objects.get(pk=queued.pk).heartbeat_at
    # Given back and queued: the first attempt's outcome would still count.
    assert match_heartbeat(match_id=queued.pk, token=first)
    second = claim_token()
    assert match_claim(match_id=queued.pk, token=second)
    claimed_beat = Match.objects.get(pk=queued.pk).heartbeat_at
    # Playing again by another attempt: still counts, and only the holder's beat moves the time.
    assert match_heartbeat(match_id=queued.pk, token=first)
    assert Match.objects.get(pk=queued.pk).heartbeat_at == claimed_beat != swept_beat
    assert match_heartbeat(match_id=queued.pk, token=second)
    beat = Match.objects.get(pk=queued.pk).heartbeat_at
    assert beat is not None and claimed_beat is not None and beat > claimed_beat
    # Failed: a late outcome still counts.
    Match.objects.filter(pk=queued.pk).update(status=MatchStatus.FAILED)
    assert match_heartbeat(match_id=queued.pk, token=first)
    # Finished by the second attempt: neither can record any more.
    Match.objects.filter(pk=queued.pk).update(status=MatchStatus.RUNNING)
    again = PlayedMatch.from_outcome(queued.pk, match_play(match_id=queued.pk))
    assert match_record_outcome(match_id=queued.pk, token=second, played=again) is True
    assert not match_heartbeat(match_id=queued.pk, token=first)
    assert not match_heartbeat(match_id=queued.pk, token=second)


def test_a_running_match_plays_on_when_its_tournament_is_cancelled_and_counts(
    organiser, playing_bots, short_variant
) -> None:
    attempt = play_one_match_cup(
        organiser=organiser, bots=playing_bots(4), variant=short_variant, name="cancelled cup"
    )
    tournament, match = attempt.tournament, attempt.match
    token, played = attempt.token, attempt.played

    tournament_cancel(tournament=tournament)

    assert Match.objects.get(pk=match.pk).status == MatchStatus.RUNNING
    assert match_heartbeat(match_id=match.pk, token=token)
    assert match_record_outcome(match_id=match.pk, token=token, played=played) is True
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED
    assert Replay.objects.filter(match=match).count() == 1
    ratings_apply_pending()
    assert Match.objects.get(pk=match.pk).rated
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.CANCELLED


def test_a_running_match_ended_by_staff_can_no_longer_record(queued) -> None:
    token = claim_token()
    assert match_claim(match_id=queued.pk, token=token)
    played = PlayedMatch.from_outcome(queued.pk, match_play(match_id=queued.pk))
    assert match_heartbeat(match_id=queued.pk, token=token)

    Match.objects.filter(pk=queued.pk).update(status=MatchStatus.CANCELLED)

    assert not match_heartbeat(match_id=queued.pk, token=token)
    assert match_record_outcome(match_id=queued.pk, token=token, played=played) is False
    assert not Replay.objects.filter(match=queued).exists()


def test_a_late_outcome_of_a_voided_deal_counts_and_supersedes_the_new_deal(queued) -> None:
    published = seed_sha256(queued.seed)
    first = claim_token()
    assert match_claim(match_id=queued.pk, token=first)
    played = PlayedMatch.from_outcome(queued.pk, match_play(match_id=queued.pk))
    _swept(queued)  # dealt anew: the first attempt's deal is voided
    second = claim_token()
    assert match_claim(match_id=queued.pk, token=second)  # played again by another worker
    queued.refresh_from_db()
    new_deal = queued.seed
    assert new_deal != played.seed
    assert VoidedDeal.objects.get(match=queued).seed == played.seed

    assert match_record_outcome(match_id=queued.pk, token=first, played=played) is True

    queued.refresh_from_db()
    assert queued.status == MatchStatus.FINISHED and queued.claimed_by == first
    # The deal that counted is the match's deal again; the one it replaced did not count.
    assert queued.seed == played.seed
    voided = VoidedDeal.objects.get(match=queued)
    assert (voided.seed, voided.reason) == (new_deal, VoidReason.SUPERSEDED)
    replay = Replay.objects.get(match=queued).data
    assert replay["seed"] == queued.seed
    assert seed_matches(queued.seed, published)
    assert verify_replay({**replay, "seed_sha256": published})["finished"]
    # The attempt of the superseded deal can no longer record.
    assert not match_heartbeat(match_id=queued.pk, token=second)
    again = PlayedMatch.from_outcome(queued.pk, match_play(match_id=queued.pk))
    assert match_record_outcome(match_id=queued.pk, token=second, played=again) is False
    assert Replay.objects.filter(match=queued).count() == 1


def test_an_outcome_of_a_deal_the_match_never_had_is_refused(queued) -> None:
    token = claim_token()
    assert match_claim(match_id=queued.pk, token=token)
    played = PlayedMatch.from_outcome(queued.pk, match_play(match_id=queued.pk))
    other = replace(played, replay={**played.replay, "seed": played.seed + 1})
    assert match_record_outcome(match_id=queued.pk, token=token, played=other) is False
    queued.refresh_from_db()
    assert queued.status == MatchStatus.RUNNING and queued.seed == played.seed
    assert not Replay.objects.filter(match=queued).exists()
    assert not VoidedDeal.objects.filter(match=queued).exists()


def test_a_rotation_of_a_duplicate_group_keeps_its_deal_when_given_back(rotation) -> None:
    for give_back in ("fail", "sweep"):
        token = claim_token()
        assert match_claim(match_id=rotation.pk, token=token)
        if give_back == "fail":
            assert match_fail_attempt(match_id=rotation.pk, token=token, error="boom") == "queued"
        else:
            _swept(rotation)
        seed = rotation.seed
        rotation.refresh_from_db()
        assert rotation.status == MatchStatus.QUEUED and rotation.seed == seed
    assert not VoidedDeal.objects.filter(match=rotation).exists()


def test_a_platform_failure_is_retried_then_marked_failed_and_not_blamed_on_bots(queued) -> None:
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
) -> None:
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


def test_a_match_of_a_paused_tournament_is_not_claimed(queued, organiser, short_variant) -> None:
    tournament = Tournament.objects.create(
        name="paused",
        organiser=organiser,
        variant=short_variant,
        format="round_robin",
        status="paused",
    )
    Match.objects.filter(pk=queued.pk).update(tournament=tournament)
    assert not match_claim(match_id=queued.pk, token=claim_token())


def test_the_sweeper_requeues_a_silent_match_and_fails_it_when_out_of_attempts(queued) -> None:
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
) -> None:
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
