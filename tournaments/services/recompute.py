"""Rebuilding every rating from the stored results, as a background job staff can ask for.

A recompute replays the matches that changed the ratings in their ``rating_sequence`` and so
reproduces the live numbers exactly (tournaments/services/ratings.py applies them). It runs as
one transaction under the rating lock, claimed and beating like a match (tournaments/leases.py),
so a dead worker's attempt leaves nothing behind and is queued again by the sweep.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from arena.faults import safe_text
from tournaments import dispatch
from tournaments.cache_keys import recompute_progress_key
from tournaments.dispatch import Task
from tournaments.leases import Heartbeat, claim_token
from tournaments.models import (
    BotVersion,
    Match,
    Rating,
    RatingHistory,
    RatingRecompute,
    RecomputeStatus,
    Variant,
)
from tournaments.selectors.rated_matches import SeatRow, counted_matches, seats_by_match
from tournaments.services.collusion_totals import CollusionRecorder, collusion_totals_clear
from tournaments.services.rating_core import (
    HistoryRow,
    RatingState,
    Unit,
    effective_at,
    ended_at,
    rate_unit,
    rate_version,
    sequence_of,
)
from tournaments.services.rating_writer import (
    forget_histories,
    forget_leaderboards,
    lock_ratings,
    save_history,
    save_state,
)
from tournaments.services.rows import CHUNK
from tournaments.services.shares import shares_reweigh_all

RECOMPUTE_REQUEST_LOCK_KEY = 7_042_018


@transaction.atomic
def ratings_recompute(*, progress: Callable[[int, int], None] | None = None) -> int:
    """Rebuild every rating and history row from the stored results, in sequence order."""
    lock_ratings()
    rated = counted_matches().order_by("rating_sequence")
    total = rated.count()
    RatingHistory.objects.all().delete()
    Rating.objects.all().delete()
    collusion_totals_clear()
    collusion = CollusionRecorder()
    state = RatingState(values={}, params={})
    raw_params = dict(Variant.objects.values_list("pk", "rating_params"))
    done = 0
    last_sequence = 0
    at: datetime | None = None
    groups_done: set[str] = set()
    versions = list(
        BotVersion.objects.filter(rating_sequence__isnull=False).order_by("rating_sequence")
    )
    history: list[HistoryRow] = []

    def apply_versions(before: float) -> None:
        nonlocal at
        while versions and sequence_of(versions[0]) < before:
            version = versions.pop(0)
            sequence = sequence_of(version)
            rows = rate_version(state, version, sequence, effective_at(version.created_at, at))
            if rows:
                at = rows[0].at
                history.extend(rows)

    while True:
        chunk = list(
            rated.filter(rating_sequence__gt=last_sequence).values_list(
                "pk", "variant_id", "finished_at", "rating_sequence", "rating_group"
            )[:CHUNK]
        )
        if not chunk:
            break
        seats = seats_by_match([m[0] for m in chunk])
        for match_id, variant_id, finished_at, sequence, group in chunk:
            if finished_at is None or sequence is None:
                raise ValueError(f"rated match {match_id} has no end time or no sequence")
            last_sequence = sequence
            apply_versions(before=sequence)
            if group in groups_done:
                continue
            params = state.params_for(variant_id, raw_params[variant_id])
            if group:
                groups_done.add(group)
                unit, unit_seats = _recorded_group(group, variant_id)
            else:
                unit, unit_seats = Unit.of([match_id], variant_id, finished_at, "", False), seats
            when = effective_at(unit.finished_at, at)
            rows = rate_unit(state, params, unit, unit_seats, sequence, when, collusion)
            if rows:  # none when too few bots were left in to rate (see rate_unit)
                at = rows[0].at
                history += rows
        save_history(history)
        history.clear()
        collusion.save()
        done += len(chunk)
        if progress is not None:
            progress(done, total)
    apply_versions(before=math.inf)
    save_history(history)
    forget_leaderboards(set(raw_params))
    forget_histories({bot_id for bot_id, _ in state.values})
    save_state(state)
    shares_reweigh_all()
    return done


def _recorded_group(group: str, variant_id: int) -> tuple[Unit, dict[int, list[SeatRow]]]:
    """A group's unit (duplicate rotations or a ladder round's tables) exactly as it was first
    rated (same members, same order)."""
    members = list(
        Match.objects.filter(rating_group=group, rated=True)
        .order_by("rating_sequence")
        .only("pk", "finished_at", "duplicate_group")
    )
    ids = [m.pk for m in members]
    finished = max(ended_at(m) for m in members)
    unit = Unit.of(ids, variant_id, finished, group, rotations=bool(members[0].duplicate_group))
    return unit, seats_by_match(ids)


class RecomputeRequest(NamedTuple):
    """The job a request for a recompute answers with, and whether the request created it."""

    job: RatingRecompute
    created: bool


def _lock_requests() -> None:
    """Serialise recompute requests only: never the rating lock a running recompute holds."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [RECOMPUTE_REQUEST_LOCK_KEY])


def ratings_request_recompute(*, requested_by: User | None = None) -> RecomputeRequest:
    """Queue a background recompute, or answer with the one already queued or running.

    Answers at once: a stale job (its worker stopped beating) is first resumed or failed.
    """
    recomputes_sweep_stale()
    with transaction.atomic():
        _lock_requests()
        active = RatingRecompute.objects.filter(
            status__in=[RecomputeStatus.QUEUED, RecomputeStatus.RUNNING]
        ).first()
        if active is not None:
            return RecomputeRequest(active, created=False)
        job = RatingRecompute.objects.create(requested_by=requested_by)
        _send(job.pk)
    return RecomputeRequest(job, created=True)


def _send(recompute_id: int) -> None:
    dispatch.send(Task.RECOMPUTE_RATINGS, recompute_id)


def recomputes_sweep_stale(*, stale_after: timedelta | None = None) -> dict[str, int]:
    """Resume recomputes whose worker stopped beating (queued again), or fail them after
    ``RECOMPUTE_MAX_ATTEMPTS`` tries.

    A recompute is one transaction, so a dead worker's attempt left nothing behind: the
    database rolled it back and released the rating lock with the connection.
    """
    stale_after = stale_after or timedelta(seconds=settings.RECOMPUTE_STALE_SECONDS)
    cutoff = timezone.now() - stale_after
    counts = {"resumed": 0, "failed": 0}
    with transaction.atomic():
        stale = list(
            RatingRecompute.objects.select_for_update(skip_locked=True).filter(
                status=RecomputeStatus.RUNNING, heartbeat_at__lt=cutoff
            )
        )
        for job in stale:
            if job.attempts >= settings.RECOMPUTE_MAX_ATTEMPTS:
                job.status = RecomputeStatus.FAILED
                job.finished_at = timezone.now()
                job.error = f"its worker stopped after {job.attempts} attempts"
                counts["failed"] += 1
            else:
                job.status = RecomputeStatus.QUEUED
                job.error = f"attempt {job.attempts} stopped with its worker; queued again"
                _send(job.pk)
                counts["resumed"] += 1
            job.save(update_fields=["status", "finished_at", "error"])
    return counts


def _recompute_heartbeat(recompute_id: int, token: str) -> bool:
    return bool(
        RatingRecompute.objects.filter(
            pk=recompute_id, status=RecomputeStatus.RUNNING, claimed_by=token
        ).update(heartbeat_at=timezone.now())
    )


def ratings_recompute_job(*, recompute_id: int) -> str:
    """Run a queued recompute, beating while it runs and writing its progress as it goes."""
    token = claim_token()
    now = timezone.now()
    claimed = RatingRecompute.objects.filter(pk=recompute_id, status=RecomputeStatus.QUEUED).update(
        status=RecomputeStatus.RUNNING,
        started_at=now,
        heartbeat_at=now,
        claimed_by=token,
        attempts=F("attempts") + 1,
    )
    if not claimed:
        return "not-queued"

    def progress(done: int, total: int) -> None:
        # The recompute is one transaction, so a row update would only show at commit; the
        # cache (Redis when configured) is seen by every process at once.
        cache.set(recompute_progress_key(recompute_id), [done, total], timeout=3600)

    mine = RatingRecompute.objects.filter(pk=recompute_id, claimed_by=token)
    try:
        with Heartbeat(lambda: _recompute_heartbeat(recompute_id, token)):
            mine.update(total=counted_matches().count())
            done = ratings_recompute(progress=progress)
    except Exception as exc:
        mine.update(
            status=RecomputeStatus.FAILED,
            error=safe_text(repr(exc), 2000),
            finished_at=timezone.now(),
        )
        raise
    mine.update(
        status=RecomputeStatus.FINISHED,
        done=done,
        total=done,
        error="",
        finished_at=timezone.now(),
    )
    # The batch ranks are fitted from the same rated matches, on the control queue.
    dispatch.send(Task.FIT_RANK_INTERVALS)
    return "finished"
