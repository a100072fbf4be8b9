"""Cancelling a tournament and writing a late outcome into its failed match never deadlock
(PostgreSQL row locks, three connections).

The outcome's writer locks the match and then, the match having failed, the tournament
(``_write_outcome`` in tournaments/services/matches.py); ``tournament_cancel`` locks the
tournament and then the matches it cancels. Here the writer waits for the match while another
transaction makes it failed, and the canceller comes in between.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import psycopg
import pytest
from django.db import connection

from tests.support.starting import play_one_match_cup
from tests.support.workers import database_url, needs_postgres_and_redis, wait_for
from tournaments.models import Match, MatchStatus, TournamentStatus
from tournaments.services.outcomes import match_record_outcome
from tournaments.services.tournaments import tournament_cancel

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgres_and_redis]

# Generous bounds for a loaded machine: each step takes milliseconds when nothing is stuck.
WITHIN_S = 30


class Side:
    """Run ``work`` on a thread of its own, with its own database connection."""

    def __init__(self, work: Callable[[], object]) -> None:
        self.error: Exception | None = None
        self._work = work
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._work()
        except Exception as exc:  # reported by the test, not lost on the thread
            self.error = exc
        finally:
            connection.close()

    def done(self) -> bool:
        return not self._thread.is_alive()

    def join(self) -> None:
        self._thread.join(WITHIN_S)
        assert self.done(), "still waiting"


def _waiting_on_locks() -> int:
    """Connections to the test database waiting for a lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        (waiting,) = cursor.fetchone()
    return int(waiting)


def test_cancelling_while_a_late_outcome_waits_for_its_failing_match_does_not_deadlock(
    organiser, playing_bots, short_variant, queue
) -> None:
    attempt = play_one_match_cup(
        organiser=organiser, bots=playing_bots(4), variant=short_variant, name="locked cup"
    )
    tournament, match = attempt.tournament, attempt.match
    token, played = attempt.token, attempt.played

    with psycopg.connect(database_url()) as giving_up:
        # The match is being given up on (out of attempts), not yet committed.
        giving_up.execute(
            f"UPDATE {Match._meta.db_table} SET status = %s WHERE {Match._meta.pk.column} = %s",
            [MatchStatus.FAILED.value, match.pk],
        )
        writer = Side(lambda: match_record_outcome(match_id=match.pk, token=token, played=played))
        wait_for(lambda: _waiting_on_locks() == 1, WITHIN_S, "the writer to wait for the match")
        canceller = Side(lambda: tournament_cancel(tournament=tournament))
        wait_for(
            lambda: canceller.done() or _waiting_on_locks() == 2,
            WITHIN_S,
            "the canceller to finish or wait for a lock",
        )
        giving_up.commit()

    writer.join()
    canceller.join()
    assert writer.error is None and canceller.error is None, (writer.error, canceller.error)
    match.refresh_from_db()
    tournament.refresh_from_db()
    assert match.status == MatchStatus.FINISHED
    assert tournament.status == TournamentStatus.CANCELLED
