"""A played match's outcome is never thrown away because of storage (real PostgreSQL).

The database refuses writes through triggers: a fault sample it will not store, or an outage
of the replay table that outlasts a worker's tries.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from tests.support.workers import wait_for
from tournaments.leases import claim_token
from tournaments.models import Match, MatchSeat, MatchStatus, Replay, SeatFault, Tournament
from tournaments.services.matches import match_claim, match_create, match_fail_attempt
from tournaments.services.outcomes import SAMPLE_NOT_STORED, PlayedMatch, match_record_outcome
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.runs import match_play, match_run
from tournaments.services.sweeps import match_sweep_stuck
from tournaments.services.tournaments import tournament_advance

postgres_only = pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="needs PostgreSQL: set DATABASE_URL (./run test does when it answers)",
)


def _refuse(table: str, condition: str, sqlstate: str) -> None:
    """Make PostgreSQL refuse inserts into ``table`` matching ``condition`` with ``sqlstate``,
    counting each refusal in the sequence ``test_refusals`` (which no rollback undoes)."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE SEQUENCE IF NOT EXISTS test_refusals")
        cursor.execute(
            f"""
            CREATE OR REPLACE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF {condition} THEN
                    PERFORM nextval('test_refusals');
                    RAISE EXCEPTION 'refused by the test' USING ERRCODE = '{sqlstate}';
                END IF;
                RETURN NEW;
            END $$
            """
        )
        cursor.execute(
            f"CREATE TRIGGER test_refuse BEFORE INSERT ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION test_refuse()"
        )


def _refusals() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT last_value, is_called FROM test_refusals")
        last_value, is_called = cursor.fetchone()
    return last_value if is_called else 0


def _scripted_not_json_match(playing_bots, short_variant, make_bot, owner, url: str) -> Match:
    good = playing_bots(3)
    broken = make_bot(owner, endpoint_url=f"{url}/not-json", status="active")
    return match_create(
        variant_id=short_variant.pk,
        bot_ids=[broken.pk, *(b.pk for b in good)],
        seed=5,
        time_limit_ms=300,
    )


@postgres_only
@pytest.mark.django_db
@pytest.mark.parametrize(
    "sqlstate",
    [
        "22P05",  # untranslatable character: a DataError, as a NUL in text is
        "23514",  # check violation: an IntegrityError
    ],
)
def test_a_fault_sample_the_database_refuses_is_dropped_and_the_match_kept(
    playing_bots, short_variant, make_bot, owner, scripted_bot_server, sqlstate
) -> None:
    match = _scripted_not_json_match(
        playing_bots, short_variant, make_bot, owner, scripted_bot_server
    )
    # The bot answers "<html>hello</html>", which becomes its not_json fault's sample.
    _refuse("tournaments_seatfault", "NEW.sample LIKE '%<html>%'", sqlstate)

    assert match_run(match_id=match.pk) == "recorded"

    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED
    assert match.attempts == 1 and match.error == ""
    seats = list(MatchSeat.objects.filter(match=match).order_by("seat"))
    replay = Replay.objects.get(match=match).data
    assert [s.score for s in seats] == replay["totals"]
    assert [s.rank for s in seats] == replay["ranks"]
    assert seats[0].disqualified
    fault = SeatFault.objects.get(seat=seats[0])
    assert fault.kind == "not_json" and fault.count == seats[0].faults
    assert fault.sample == SAMPLE_NOT_STORED
    assert ratings_apply_pending() == 1
    assert ratings_apply_pending() == 0
    match.refresh_from_db()
    assert match.rated


@postgres_only
@pytest.mark.django_db
def test_a_platform_error_carrying_hostile_text_is_stored_as_safe_text(queued_match) -> None:
    token = claim_token()
    assert match_claim(match_id=queued_match.pk, token=token)
    error = "RuntimeError('bot said \x00\x1b[31m\udc80')"
    assert match_fail_attempt(match_id=queued_match.pk, token=token, error=error) == "queued"
    queued_match.refresh_from_db()
    assert "\x00" not in queued_match.error and "\x1b" not in queued_match.error
    assert "bot said" in queued_match.error
    queued_match.error.encode("utf-8")  # no lone surrogate either


@pytest.fixture
def queued_match(playing_bots, short_variant) -> Match:
    bots = playing_bots(4)
    return match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=11, time_limit_ms=500
    )


@pytest.mark.django_db
@pytest.mark.parametrize("duplicate_group", ["", "g1"])
def test_an_outcome_arriving_after_its_match_failed_finishes_it_and_its_tournament(
    queued_match, organiser, short_variant, duplicate_group
) -> None:
    tournament = Tournament.objects.create(
        name="given up",
        organiser=organiser,
        variant=short_variant,
        format="round_robin",
        status="running",
        started_at=timezone.now(),
    )
    # Given up on, an ordinary match is dealt anew and a rotation of a duplicate group keeps its
    # deal: the late outcome counts either way.
    Match.objects.filter(pk=queued_match.pk).update(
        tournament=tournament, max_attempts=1, duplicate_group=duplicate_group
    )
    token = claim_token()
    assert match_claim(match_id=queued_match.pk, token=token)
    played = PlayedMatch.from_outcome(queued_match.pk, match_play(match_id=queued_match.pk))
    # The worker's heartbeat stopped with the database; the sweeper gave up on the match.
    Match.objects.filter(pk=queued_match.pk).update(
        heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    assert match_sweep_stuck(stale_after=timedelta(seconds=30))["failed"] == 1
    assert tournament_advance(tournament_id=tournament.pk) == "finished"

    assert match_record_outcome(match_id=queued_match.pk, token=token, played=played) is True

    queued_match.refresh_from_db()
    assert queued_match.status == MatchStatus.FINISHED and queued_match.error == ""
    assert queued_match.seed == played.seed == Replay.objects.get(match=queued_match).data["seed"]
    tournament.refresh_from_db()
    assert tournament.status == "running" and tournament.finished_at is None
    assert tournament_advance(tournament_id=tournament.pk) == "finished"
    assert ratings_apply_pending() == 1
    assert (
        match_record_outcome(match_id=queued_match.pk, token=claim_token(), played=played) is False
    )
    assert ratings_apply_pending() == 0
    assert Replay.objects.filter(match=queued_match).count() == 1


@pytest.mark.django_db
def test_a_played_match_travels_in_a_task_message_unchanged(
    playing_bots, short_variant, make_bot, owner, scripted_bot_server
) -> None:
    match = _scripted_not_json_match(
        playing_bots, short_variant, make_bot, owner, scripted_bot_server
    )
    played = PlayedMatch.from_outcome(match.pk, match_play(match_id=match.pk))
    assert played.seats[0].fault_records  # the faults travel too
    message = json.loads(json.dumps(played.to_message()))
    assert PlayedMatch.from_message(message) == played


@pytest.fixture
def replay_outage(transactional_db) -> Iterator[None]:
    """The replay table refuses every insert (lock not available) while ``test_outage`` has a
    row; the trigger, its function, the table and the sequence go with the test."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE test_outage (down boolean)")
        cursor.execute("INSERT INTO test_outage VALUES (true)")
    _refuse("tournaments_replay", "EXISTS (SELECT 1 FROM test_outage)", "55P03")
    yield
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER IF EXISTS test_refuse ON tournaments_replay")
        cursor.execute("DROP FUNCTION IF EXISTS test_refuse()")
        cursor.execute("DROP TABLE IF EXISTS test_outage")
        cursor.execute("DROP SEQUENCE IF EXISTS test_refusals")


@postgres_only
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not settings.REDIS_URL, reason="needs Redis: set REDIS_URL")
def test_an_outcome_outlasting_the_tries_is_recorded_by_a_worker_once_the_database_is_back(
    replay_outage, playing_bots, short_variant, start_worker, settings
) -> None:
    settings.MATCH_RECORD_BACKOFF_SECONDS = 0.05
    bots = playing_bots(4)
    match = match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=11, time_limit_ms=2000
    )
    dealt = match.seed

    assert match_run(match_id=match.pk) == "handed-off"

    assert _refusals() == settings.MATCH_RECORD_TRIES
    match.refresh_from_db()
    assert match.status == MatchStatus.RUNNING
    # The sweeper gives the silent match back meanwhile; the late outcome still counts.
    Match.objects.filter(pk=match.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert match_sweep_stuck(stale_after=timedelta(seconds=30))["requeued"] == 1
    start_worker("recorder", queues=[""])  # control tasks only: nobody plays the match again
    wait_for(lambda: _refusals() > settings.MATCH_RECORD_TRIES, 120, "the worker to try while down")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM test_outage")  # the database is back

    def finished() -> bool:
        match.refresh_from_db()
        return match.status == MatchStatus.FINISHED

    wait_for(finished, 180, "the worker to record the outcome")
    wait_for(lambda: Match.objects.get(pk=match.pk).rated, 120, "the match to be rated")
    assert match.attempts == 1
    assert Replay.objects.filter(match=match).count() == 1
    replay = Replay.objects.get(match=match).data
    seats = MatchSeat.objects.filter(match=match).order_by("seat")
    assert [s.score for s in seats] == replay["totals"]
    # The deal played counts again; the one drawn when the sweeper gave the match back did not.
    assert replay["seed"] == match.seed == dealt
    assert list(match.voided_deals.values_list("reason", flat=True)) == ["superseded"]


@pytest.fixture
def replay_refused_until_a_heartbeat(transactional_db) -> Iterator[None]:
    """The replay table refuses inserts (lock not available) until the match has had a
    heartbeat after the first refusal; heartbeats are counted by a trigger on the match table."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE SEQUENCE test_beats")
        cursor.execute("CREATE SEQUENCE test_beats_at_outage")
        cursor.execute(
            """
            CREATE FUNCTION test_count_beat() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM nextval('test_beats');
                RETURN NEW;
            END $$
            """
        )
        cursor.execute(
            "CREATE TRIGGER test_count_beat AFTER UPDATE ON tournaments_match FOR EACH ROW "
            "WHEN (NEW.heartbeat_at IS DISTINCT FROM OLD.heartbeat_at) "
            "EXECUTE FUNCTION test_count_beat()"
        )
        cursor.execute(
            """
            CREATE FUNCTION test_beats_now() RETURNS bigint LANGUAGE sql AS $$
                SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM test_beats
            $$
            """
        )
        cursor.execute(
            """
            CREATE FUNCTION test_outage_began() RETURNS boolean LANGUAGE plpgsql AS $$
            BEGIN
                IF NOT (SELECT is_called FROM test_beats_at_outage) THEN
                    PERFORM setval('test_beats_at_outage', test_beats_now() + 1);
                END IF;
                RETURN true;
            END $$
            """
        )
    # Refused while no beat came after the first refusal (the sequence holds beats + 1).
    _refuse(
        "tournaments_replay",
        "test_outage_began() AND test_beats_now() + 1 <= "
        "(SELECT last_value FROM test_beats_at_outage)",
        "55P03",
    )
    yield
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER IF EXISTS test_refuse ON tournaments_replay")
        cursor.execute("DROP TRIGGER IF EXISTS test_count_beat ON tournaments_match")
        for function in ("test_refuse", "test_count_beat", "test_beats_now", "test_outage_began"):
            cursor.execute(f"DROP FUNCTION IF EXISTS {function}()")
        for sequence in ("test_refusals", "test_beats", "test_beats_at_outage"):
            cursor.execute(f"DROP SEQUENCE IF EXISTS {sequence}")


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_beats_on_while_the_final_write_is_tried_again(
    replay_refused_until_a_heartbeat, playing_bots, short_variant, settings
) -> None:
    # Tries over about a minute, far more than a heartbeat's interval.
    settings.MATCH_RECORD_TRIES = 8
    bots = playing_bots(4)
    match = match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=11, time_limit_ms=2000
    )

    assert match_run(match_id=match.pk) == "recorded"

    assert _refusals() >= 1  # the first try was refused; a later one, after a beat, was not
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.attempts == 1
    assert Replay.objects.filter(match=match).count() == 1
