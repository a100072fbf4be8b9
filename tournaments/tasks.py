"""Celery tasks: each takes ids, loads rows, calls one service, and returns quietly if gone.

Tasks are acknowledged late and rejected when a worker is lost (config/celery_app.py), so a
killed worker's match is delivered again; the services make a second delivery harmless.
"""

from __future__ import annotations

from celery import shared_task

from tournaments.services import matches


@shared_task(name="tournaments.run_match", ignore_result=True)
def run_match(match_id: int) -> str:
    """Claim, play and record one match."""
    return matches.match_run(match_id=match_id)


@shared_task(name="tournaments.sweep_matches", ignore_result=True)
def sweep_matches() -> dict[str, int]:
    """Give back matches whose worker died and re-send matches the broker lost."""
    return matches.match_sweep_stuck()


@shared_task(name="tournaments.rate_finished_matches", ignore_result=True)
def rate_finished_matches() -> int:
    """Apply the rating updates of finished matches, once each, in a fixed order."""
    from tournaments.services.ratings import ratings_apply_pending

    return ratings_apply_pending()
