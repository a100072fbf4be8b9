"""Queued checks of bots, fair between owners: each owner's checks wait in a backlog of its own.

A verification calls its bot six times (``hello`` and the signing probes, arena/probes.py), up
to the hello timeout each, and every check is a task on the control queue. Sent as asked, one
owner's many slow bots would fill the queue in front of everyone else's checks. So at most
``CHECKS_IN_FLIGHT_PER_OWNER`` of an owner's checks are handed to the workers at once; the
rest wait, oldest first, and the next is sent as one completes. The queue then holds at most
that many of each owner's checks, and another owner's check waits behind a few of each owner's,
never behind the whole of one owner's backlog. A check sent but not completed within
``BOT_VERIFY_RESEND_S`` (its message lost, or the platform could not call the bot) no longer
holds a place and is sent again by the periodic sweep (``checks_send_all_waiting``).

Asking is limited too: ``CHECK_REQUESTS_PER_HOUR`` new checks an hour per owner (staff are
exempt); asking again for a pending check answers it at no cost.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.errors import TooManyRequestsError
from tournaments.models import Bot, BotHealthCheck

logger = logging.getLogger(__name__)

# The window CHECK_REQUESTS_PER_HOUR counts in.
REQUEST_WINDOW_S = 3600


def _lock_owner(owner_id: int) -> None:
    """Take the owner's row: its backlog is read and sent by one transaction at a time."""
    User.objects.select_for_update().filter(pk=owner_id).first()


def _count_request(owner: User) -> None:
    """Count one new check against the owner's hourly allowance; refuse one over it.

    The count lives in the shared cache, in fixed windows of an hour; while the cache cannot
    be reached, checks are let through and logged, as throttled writes are.
    """
    if owner.is_staff:
        return
    now = timezone.now().timestamp()
    window = int(now // REQUEST_WINDOW_S)
    key = f"check-requests:{owner.pk}:{window}"
    try:
        cache.add(key, 0, timeout=REQUEST_WINDOW_S + 60)
        count = cache.incr(key)
    except Exception as exc:  # any backend's failure: let the check through
        logger.warning("check request count skipped, the cache is unreachable: %s", exc)
        return
    limit = settings.CHECK_REQUESTS_PER_HOUR
    if count > limit:
        wait = max(1, int((window + 1) * REQUEST_WINDOW_S - now) + 1)
        raise TooManyRequestsError(
            f"An account may ask for {limit} verifications an hour; try again in {wait} s.",
            retry_after=wait,
        )


def check_queue(*, bot: Bot, counted: bool) -> BotHealthCheck:
    """Queue a check of ``bot`` in its owner's backlog and answer it, pending, at once.

    A bot has at most one pending check: asking again answers the pending one (and sends it
    again if it was lost). ``counted``: a request of the owner's (registration, the verify
    button or endpoint), limited per hour; a check the platform or staff queue is not counted.
    """
    with transaction.atomic():
        _lock_owner(bot.owner_id)
        check = bot.health_checks.filter(ok__isnull=True).order_by("-at").first()
        if check is None:
            if counted:
                _count_request(bot.owner)
            check = BotHealthCheck.objects.create(bot=bot)
        _send_waiting(bot.owner_id)
    return check


def _send_waiting(owner_id: int) -> list[int]:
    """Hand the owner's waiting checks to the workers, oldest first, up to its places; return
    their ids. Run with the owner's row locked."""
    now = timezone.now()
    lost_before = now - timedelta(seconds=settings.BOT_VERIFY_RESEND_S)
    pending = BotHealthCheck.objects.filter(bot__owner_id=owner_id, ok__isnull=True)
    in_flight = pending.filter(sent_at__gte=lost_before).count()
    places = settings.CHECKS_IN_FLIGHT_PER_OWNER - in_flight
    if places <= 0:
        return []
    waiting = list(
        pending.filter(Q(sent_at__isnull=True) | Q(sent_at__lt=lost_before))
        .order_by("at", "pk")
        .values_list("pk", flat=True)[:places]
    )
    BotHealthCheck.objects.filter(pk__in=waiting).update(sent_at=now)
    for check_id in waiting:
        dispatch.send(Task.COMPLETE_HEALTH_CHECK, check_id)
    return waiting


def checks_send_next(*, owner_id: int) -> list[int]:
    """Send the owner's next waiting checks, as one of its checks has completed."""
    with transaction.atomic():
        _lock_owner(owner_id)
        return _send_waiting(owner_id)


def checks_send_all_waiting() -> int:
    """The periodic sweep: send every owner's waiting checks that have a place, lost ones
    among them; return how many were sent."""
    owners = (
        BotHealthCheck.objects.filter(ok__isnull=True)
        .order_by()
        .values_list("bot__owner_id", flat=True)
        .distinct()
    )
    return sum(len(checks_send_next(owner_id=owner_id)) for owner_id in owners)
