"""Celery tasks: each takes ids, loads rows, calls one service, and returns quietly if gone.

Tasks are acknowledged late and rejected when a worker is lost (config/celery_app.py), so a
killed worker's match is delivered again; the services make a second delivery harmless.
"""

from __future__ import annotations

from typing import Any

from celery import Task as CeleryTask
from celery import shared_task
from django.db import InterfaceError, OperationalError

from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.errors import UnavailableError
from tournaments.services import (
    bots,
    checks,
    collusion,
    hosting,
    ladders,
    outcomes,
    rank_intervals,
    ratings,
    recompute,
    sweeps,
    tournaments,
    users,
)


# A match task claims its match and hands it to the worker process's match host, which plays
# and records it; it returns as soon as the match plays, and waits only while the host is full.
@shared_task(name="tournaments.run_match", ignore_result=True, bind=True)
def run_match(self: CeleryTask, match_id: int) -> str:
    """Claim a match and start playing it (play and record it when run in-process)."""
    return hosting.match_start(match_id=match_id, wait=bool(self.request.is_eager))


@shared_task(name="tournaments.run_ladder_match", ignore_result=True, bind=True)
def run_ladder_match(self: CeleryTask, match_id: int) -> str:
    """Claim a ladder match and start playing it (on the ladder queue)."""
    return hosting.match_start(match_id=match_id, wait=bool(self.request.is_eager))


@shared_task(name="tournaments.run_scrimmage_match", ignore_result=True, bind=True)
def run_scrimmage_match(self: CeleryTask, match_id: int) -> str:
    """Claim a match of an owner's scrimmage and start playing it (on the scrimmage queue)."""
    return hosting.match_start(match_id=match_id, wait=bool(self.request.is_eager))


@shared_task(
    name="tournaments.record_outcome",
    ignore_result=True,
    autoretry_for=(OperationalError, InterfaceError),
    max_retries=None,
    retry_backoff=2,
    retry_backoff_max=30,
    retry_jitter=True,
)
def record_outcome(match_id: int, token: str, played: dict[str, Any]) -> str:
    """Record a played match whose final write outlasted its worker's tries.

    Tried again, backing off up to 30 seconds, for as long as the database is away; the
    write is first-writer-wins, so a second delivery or a late arrival changes nothing.
    """
    outcome = outcomes.PlayedMatch.from_message(played)
    recorded = outcomes.match_record_outcome(match_id=match_id, token=token, played=outcome)
    return "recorded" if recorded else "match-ended"


@shared_task(name="tournaments.top_up_ladders", ignore_result=True)
def top_up_ladders() -> int:
    """Queue new ladder tables up to each running ladder's number in flight."""
    dispatch.task_started(Task.TOP_UP_LADDERS)
    return ladders.ladders_top_up()


@shared_task(name="tournaments.sweep_matches", ignore_result=True)
def sweep_matches() -> dict[str, int]:
    """Give back matches whose worker died and re-send matches the broker lost."""
    return sweeps.match_sweep_stuck()


@shared_task(name="tournaments.rate_finished_matches", ignore_result=True)
def rate_finished_matches() -> int:
    """Apply the rating updates of finished matches, once each, in a fixed order."""
    dispatch.task_started(Task.RATE_FINISHED_MATCHES)
    return ratings.ratings_apply_pending()


@shared_task(name="tournaments.advance_tournament", ignore_result=True)
def advance_tournament(tournament_id: int) -> str:
    """Next Swiss round, ladder top-up, or finish the tournament when its matches are done."""
    return tournaments.tournament_advance(tournament_id=tournament_id)


@shared_task(name="tournaments.generate_tournament", ignore_result=True)
def generate_tournament(tournament_id: int) -> str:
    """Create and queue a starting tournament's matches."""
    return tournaments.tournament_generate(tournament_id=tournament_id)


@shared_task(name="tournaments.reconcile_tournaments", ignore_result=True)
def reconcile_tournaments() -> dict[str, int]:
    """Move on tournaments whose start or last advance message was lost."""
    return tournaments.tournaments_reconcile()._asdict()


@shared_task(name="tournaments.start_due_tournaments", ignore_result=True)
def start_due_tournaments() -> int:
    """Start scheduled tournaments whose start time has come."""
    return tournaments.tournament_start_due()


@shared_task(name="tournaments.check_bot_health", ignore_result=True)
def check_bot_health() -> dict[str, int]:
    """Hello every bot in play; disable after repeated failures, re-enable after a pass."""
    return bots.bots_check_health()


@shared_task(name="tournaments.recompute_ratings", ignore_result=True)
def recompute_ratings(recompute_id: int) -> str:
    """Rebuild all ratings from the stored results, reporting progress on the job row."""
    return recompute.ratings_recompute_job(recompute_id=recompute_id)


@shared_task(name="tournaments.fit_rank_intervals", ignore_result=True)
def fit_rank_intervals() -> dict[str, int]:
    """Fit each variant's rated history at once and bootstrap every bot's rank (new ones only)."""
    return rank_intervals.rank_intervals_fit_all()


@shared_task(name="tournaments.scan_collusion", ignore_result=True)
def scan_collusion() -> dict[str, int]:
    """Test every pair of bots of each variant for collusion and store the flags (new ones only)."""
    return collusion.collusion_scan_all()


@shared_task(name="tournaments.sweep_recomputes", ignore_result=True)
def sweep_recomputes() -> dict[str, int]:
    """Queue again (or fail) recomputes whose worker stopped beating."""
    return recompute.recomputes_sweep_stale()


@shared_task(name="tournaments.complete_health_check", ignore_result=True)
def complete_health_check(check_id: int) -> str:
    """Call the bot of a queued check (a registration, a new endpoint, a verification asked
    for), record the outcome and send its owner's next waiting check."""
    try:
        status = bots.bot_complete_check(check_id=check_id)
    except UnavailableError:
        return "unavailable"  # stays pending; the sweep of waiting checks sends it again
    return "done" if status is None else str(status)


@shared_task(name="tournaments.send_waiting_checks", ignore_result=True)
def send_waiting_checks() -> int:
    """Send waiting checks of owners with a place free, lost ones among them."""
    return checks.checks_send_all_waiting()


# A mail server that is away is tried again a few times; smtplib's errors are OSErrors.
@shared_task(
    name="tournaments.send_password_reset",
    ignore_result=True,
    autoretry_for=(OSError,),
    max_retries=3,
    retry_backoff=10,
)
def send_password_reset(email: str, domain: str, protocol: str) -> None:
    """Mail a password reset link to the accounts of ``email``, if there are any."""
    users.user_send_password_reset(email=email, domain=domain, protocol=protocol)


@shared_task(
    name="tournaments.send_email_confirmation",
    ignore_result=True,
    autoretry_for=(OSError,),
    max_retries=3,
    retry_backoff=10,
)
def send_email_confirmation(user_id: int, domain: str, protocol: str) -> None:
    """Mail a link that confirms the account's email address, unless it is confirmed."""
    users.user_send_email_confirmation(user_id=user_id, domain=domain, protocol=protocol)
