"""Start a tournament as the API does, then make its fixtures as the worker's task would.

The start only marks the tournament starting and queues the task after the transaction
commits; tests that run inside a rolled-back transaction call the task's service directly.
"""

from __future__ import annotations

from tournaments.models import Tournament, TournamentStatus
from tournaments.services.tournaments import tournament_generate, tournament_start


def start_and_generate(tournament: Tournament) -> Tournament:
    """The tournament started, its matches created and queued, and running."""
    started = tournament_start(tournament=tournament)
    assert started.status == TournamentStatus.STARTING
    assert tournament_generate(tournament_id=started.pk) == "running"
    started.refresh_from_db()
    return started
