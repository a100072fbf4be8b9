"""Start a tournament as the API does, then make its fixtures as the worker's task would.

The start only marks the tournament starting and queues the task after the transaction
commits; tests that run inside a rolled-back transaction call the task's service directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from tournaments.leases import claim_token
from tournaments.models import Bot, Match, Tournament, TournamentStatus, Variant
from tournaments.services.matches import match_claim
from tournaments.services.outcomes import PlayedMatch
from tournaments.services.runs import match_play
from tournaments.services.tournaments import (
    tournament_create,
    tournament_generate,
    tournament_start,
)


def start_and_generate(tournament: Tournament) -> Tournament:
    """The tournament started, its matches created and queued, and running."""
    started = tournament_start(tournament=tournament)
    assert started.status == TournamentStatus.STARTING
    assert tournament_generate(tournament_id=started.pk) == "running"
    started.refresh_from_db()
    return started


@dataclass(frozen=True)
class PlayedAttempt:
    """A one-match tournament whose match this attempt claimed and played, not yet recorded."""

    tournament: Tournament
    match: Match
    token: str
    played: PlayedMatch


def play_one_match_cup(
    *, organiser: User, bots: list[Bot], variant: Variant, name: str
) -> PlayedAttempt:
    """Start a round robin of ``bots`` (one table, one match), claim its match and play it."""
    tournament = start_and_generate(
        tournament_create(
            organiser=organiser,
            name=name,
            variant=variant,
            format="round_robin",
            bot_ids=[b.pk for b in bots],
            time_limit_ms=500,
        )
    )
    match = tournament.matches.get()
    token = claim_token()
    assert match_claim(match_id=match.pk, token=token)
    played = PlayedMatch.from_outcome(match.pk, match_play(match_id=match.pk))
    return PlayedAttempt(tournament, match, token, played)
