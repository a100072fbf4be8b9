"""Sweeps run by Celery beat: matches whose worker died, and matches whose message was lost."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.models import Match, MatchStatus, VoidReason
from tournaments.services.matches import claimable, release

log = logging.getLogger(__name__)

# At most this many lost matches of a kind are sent again by one sweep.
RESEND_BATCH = 1000


def match_sweep_stuck(*, stale_after: timedelta | None = None) -> dict[str, int]:
    """Give back matches whose worker died (no heartbeat), and re-send long-queued ones."""
    stale_after = stale_after or timedelta(seconds=settings.MATCH_STALE_SECONDS)
    cutoff = timezone.now() - stale_after
    released = {"requeued": 0, "failed": 0, "resent": 0}
    stuck = Match.objects.filter(status=MatchStatus.RUNNING, heartbeat_at__lt=cutoff)
    for match_id in stuck.values_list("pk", flat=True):
        with transaction.atomic():
            match = (
                Match.objects.select_for_update(skip_locked=True)
                .filter(pk=match_id, status=MatchStatus.RUNNING, heartbeat_at__lt=cutoff)
                .first()
            )
            if match is not None:
                status = release(
                    match, "the worker stopped sending heartbeats", VoidReason.WORKER_LOST
                )
                released["requeued" if status == MatchStatus.QUEUED else "failed"] += 1
    released["resent"] = _resend_lost()
    return released


def _resend_lost() -> int:
    """Re-send queued matches whose message a broker lost; return how many were sent.

    A claimable match waiting longer than ``MATCH_RESEND_SECONDS`` may have lost its message
    (a broker restarted without its data, a worker killed holding it). Only as many as its
    queue lacks are sent again, oldest first: a queue holding at least one message per
    claimable match is a backlog being worked through, and is left alone (the match queues
    hold match messages only; config/settings.py routes every other task to the control or
    bulk queue). A tournament's matches not yet sent are not claimable, so they are not
    counted: only its window of sent ones has messages (``_send_window`` in
    tournaments/services/tournaments.py). A match sent again waits the full time before it
    can be sent once more, so duplicates stay few, and a duplicate delivery finds the match
    claimed and does nothing.
    """
    cutoff = timezone.now() - timedelta(seconds=settings.MATCH_RESEND_SECONDS)
    sent = 0
    for task, matches in (
        (Task.RUN_MATCH, claimable().filter(ladder=None, scrimmage=None)),
        (Task.RUN_LADDER_MATCH, claimable().exclude(ladder=None)),
        (Task.RUN_SCRIMMAGE_MATCH, claimable().exclude(scrimmage=None)),
    ):
        kind = settings.TASK_QUEUE_KINDS[task]
        waiting = matches.count()
        if waiting == 0:
            continue
        missing = waiting - dispatch.messages_waiting(dispatch.queue_of(kind))
        if missing <= 0:
            continue
        rows = list(
            matches.filter(updated_at__lt=cutoff)
            .order_by("updated_at", "pk")
            .values_list("pk", flat=True)[: min(missing, RESEND_BATCH)]
        )
        with transaction.atomic():
            Match.objects.filter(pk__in=rows).update(updated_at=timezone.now())
            for match_id in rows:
                dispatch.send(task, match_id)
        if rows:
            log.warning(
                "%s matches waited queued with %s messages missing from their queue; sent %s again",
                waiting,
                missing,
                len(rows),
            )
        sent += len(rows)
    return sent
