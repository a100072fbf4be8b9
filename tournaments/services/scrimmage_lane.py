"""The scrimmage lane when a match is claimed: consent and playability read again, and each
account's fair share of the lane.

A scrimmage is asked for once but its matches are claimed one by one, minutes or hours apart,
so what made it allowed is read again at every claim (``scrimmage_admit``, called by
``match_claim`` in tournaments/services/matches.py inside its transaction): when a bot of the
match is no longer active (disabled, pending after a rotated secret or a new endpoint, deleted),
when another owner's bot no longer accepts scrimmages, or when the asking account's address is
no longer confirmed, the scrimmage is cancelled with its matches not yet ended, and no bot is
called again for it.

The share: an account has at most ``SCRIMMAGE_OWNER_MATCHES_IN_FLIGHT`` scrimmage matches
playing; with one playing, it yields its next place while an account with none playing waits
that used less lane time (match seconds) in the last ``SCRIMMAGE_SHARE_WINDOW_SECONDS``. A match
refused for the share stays queued, and one of the account's queued matches is sent again each
time one of its matches ends (``scrimmage_send_next``), so its series goes on in turn.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import F
from django.utils import timezone

from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.models import (
    BotStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Scrimmage,
    ScrimmageOpponent,
    email_confirmed_q,
)

# Matches of a scrimmage that a cancel ends: not yet played to the end.
OPEN = (MatchStatus.QUEUED, MatchStatus.RUNNING)


class Admission(StrEnum):
    """What the scrimmage lane says to a claim of a queued match."""

    PLAY = "play"  # not a scrimmage match, or one that may start now
    WAIT = "wait"  # the account's share is in use: sent again when one of its matches ends
    CANCELLED = "cancelled"  # a bot may no longer be played: the scrimmage was cancelled


def scrimmage_admit(*, match_id: int) -> Admission:
    """Say whether a queued match may be claimed now as far as scrimmages go; cancel its
    scrimmage when one of its bots may no longer be played. Call inside the claim's transaction:
    the asking account's row is locked, so two claims never both take its last place."""
    row = Match.objects.filter(pk=match_id).values_list("scrimmage_id", "scrimmage__owner_id")
    found = row.first()
    if found is None or found[0] is None:
        return Admission.PLAY
    scrimmage_id, owner_id = found
    owner = User.objects.select_for_update().filter(pk=owner_id).first()
    if owner is None:
        return Admission.CANCELLED
    refusal = _refusal(match_id=match_id, owner=owner)
    if refusal:
        scrimmage_cancel_open(scrimmage_id=scrimmage_id, reason=refusal)
        return Admission.CANCELLED
    return Admission.PLAY if _has_room(owner.pk) else Admission.WAIT


def _refusal(*, match_id: int, owner: User) -> str:
    """Why the match may no longer be played, or "" when it may."""
    if not User.objects.filter(email_confirmed_q(), pk=owner.pk).exists():
        return "its owner's email address is no longer confirmed"
    seats = list(MatchSeat.objects.filter(match_id=match_id).select_related("bot"))
    table = 1 + ScrimmageOpponent.objects.filter(scrimmage__matches__pk=match_id).count()
    if len(seats) < table:
        return "a bot of its table was deleted"
    for seat in seats:
        bot = seat.bot
        if bot.status != BotStatus.ACTIVE:
            return f"bot {bot.name} is {bot.get_status_display()}"
        theirs = bot.owner_id != owner.pk and not bot.reference_player
        if theirs and not bot.accepts_scrimmages:
            return f"the owner of {bot.name} no longer accepts scrimmages"
    return ""


def _has_room(owner_id: int) -> bool:
    """Whether the account may start another scrimmage match (its row is locked)."""
    playing = Match.objects.filter(scrimmage__owner_id=owner_id, status=MatchStatus.RUNNING)
    running = playing.count()
    if running == 0:
        return True
    if running >= settings.SCRIMMAGE_OWNER_MATCHES_IN_FLIGHT:
        return False
    since = timezone.now() - timedelta(seconds=settings.SCRIMMAGE_SHARE_WINDOW_SECONDS)
    mine = lane_seconds(owner_id=owner_id, since=since)
    return all(lane_seconds(owner_id=o, since=since) >= mine for o in _waiting_owners(owner_id))


def _waiting_owners(owner_id: int) -> set[int]:
    """Other accounts with a scrimmage match queued and none playing."""
    queued = set(
        Match.objects.filter(status=MatchStatus.QUEUED, attempts__lt=F("max_attempts"))
        .exclude(scrimmage=None)
        .exclude(scrimmage__owner_id=owner_id)
        .values_list("scrimmage__owner_id", flat=True)
        .distinct()
    )
    playing = set(
        Match.objects.filter(status=MatchStatus.RUNNING, scrimmage__owner_id__in=queued)
        .values_list("scrimmage__owner_id", flat=True)
        .distinct()
    )
    return queued - playing


def lane_seconds(*, owner_id: int, since: datetime) -> float:
    """Seconds the account's scrimmage matches held the lane since ``since`` (running ones
    counted up to now)."""
    now = timezone.now()
    rows = Match.objects.filter(scrimmage__owner_id=owner_id, started_at__isnull=False).exclude(
        finished_at__lt=since
    )
    total = 0.0
    for started, finished in rows.values_list("started_at", "finished_at"):
        if started is not None:
            total += ((finished or now) - max(started, since)).total_seconds()
    return max(total, 0.0)


def scrimmage_send_next(*, scrimmage_id: int) -> None:
    """Send the asking account's oldest queued scrimmage match again, now that one of its
    matches ended: a match refused for the share waits for this."""
    owner_id = Scrimmage.objects.filter(pk=scrimmage_id).values_list("owner_id", flat=True).first()
    following = (
        Match.objects.filter(
            scrimmage__owner_id=owner_id,
            status=MatchStatus.QUEUED,
            attempts__lt=F("max_attempts"),
        )
        .order_by("pk")
        .values_list("pk", flat=True)
        .first()
    )
    if following is not None:
        dispatch.send(Task.RUN_SCRIMMAGE_MATCH, following)


def scrimmage_cancel_open(*, scrimmage_id: int, reason: str) -> int:
    """Cancel the scrimmage's matches not yet ended and mark it cancelled; return how many.

    A running one is cut where it waits: its heartbeat finds it ended and no bot is called
    again for it (tournaments/services/runs.py); a scrimmage is never rated, so nothing that
    counts is lost."""
    now = timezone.now()
    cancelled = Match.objects.filter(scrimmage_id=scrimmage_id, status__in=OPEN).update(
        status=MatchStatus.CANCELLED, finished_at=now, claimed_by="", updated_at=now
    )
    Scrimmage.objects.filter(pk=scrimmage_id, cancelled_at=None).update(
        cancelled_at=now, cancel_reason=reason[:300]
    )
    scrimmage_send_next(scrimmage_id=scrimmage_id)
    return cancelled
