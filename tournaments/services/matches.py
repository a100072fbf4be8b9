"""A match's row through its life: created and queued, claimed, given back, failed, retried.

A match is claimed by a conditional UPDATE carrying a unique token (tournaments/leases.py), so
one worker plays it at a time; workers share only the database and the broker. Playing and
recording live in tournaments/services/runs.py and tournaments/services/outcomes.py, the sweep
of stuck and lost matches in tournaments/services/sweeps.py.

A match given back is dealt anew (``release``), its earlier deal kept as voided; an attempt of
that deal may still be playing on, so its seed stays hidden until the match has ended. A late
outcome of it still counts while the match has not finished (first writer wins,
tournaments/services/outcomes.py).

Cancelling a tournament never ends a running match: it cancels only queued ones
(``tournament_cancel`` in tournaments/services/tournaments.py), so a match under way is played
to the end and counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from arena.faults import safe_text
from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.errors import ConflictError
from tournaments.formats import Fixture
from tournaments.models import (
    Ladder,
    LadderStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Tournament,
    TournamentStatus,
    VoidedDeal,
    VoidReason,
)
from tournaments.seeds import deal_seed, new_seed
from tournaments.services.scrimmage_lane import Admission, scrimmage_admit, scrimmage_send_next

# A played outcome is still written into a match in these states (first writer wins); an
# attempt whose match has left them stops playing (``match_heartbeat``).
RECORDABLE = (MatchStatus.QUEUED, MatchStatus.RUNNING, MatchStatus.FAILED)


def match_task(*, ladder_id: int | None, scrimmage_id: int | None) -> Task:
    """The task that plays a match: ladder matches go to the ladder queue, scrimmage matches to
    the scrimmage queue, tournament matches to the matches queue (config/settings.py routes
    the three tasks)."""
    if ladder_id is not None:
        return Task.RUN_LADDER_MATCH
    if scrimmage_id is not None:
        return Task.RUN_SCRIMMAGE_MATCH
    return Task.RUN_MATCH


def match_enqueue(*, match: Match) -> None:
    """Send the match to the workers of its queue once the current transaction commits."""
    task = match_task(ladder_id=match.ladder_id, scrimmage_id=match.scrimmage_id)
    dispatch.send(task, match.pk)


def claimable() -> QuerySet[Match]:
    """Queued matches a worker may claim now (one definition for claiming and re-sending).

    A tournament match not yet sent (``unsent``) is not: its message is still to come.
    """
    # A ladder plays a duplicate group's rotations one after another, so its bots are never
    # in two matches at once: a rotation waits while an earlier one is queued or running.
    earlier_rotation = Match.objects.filter(
        ladder_id=OuterRef("ladder_id"),
        duplicate_group=OuterRef("duplicate_group"),
        pk__lt=OuterRef("pk"),
        status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING],
    )
    return (
        Match.objects.filter(
            status=MatchStatus.QUEUED, attempts__lt=F("max_attempts"), unsent=False
        )
        .exclude(tournament__status__in=[TournamentStatus.PAUSED, TournamentStatus.CANCELLED])
        .exclude(ladder__status=LadderStatus.PAUSED)
        .exclude(Q(ladder__isnull=False) & ~Q(duplicate_group="") & Exists(earlier_rotation))
    )


@transaction.atomic
def match_claim(*, match_id: int, token: str) -> bool:
    """Claim a queued match for this attempt; False when it is not (or no longer) claimable.

    A scrimmage match is first put to the scrimmage lane (``scrimmage_admit``): consent and
    playability are read again, and the asking account's share is kept."""
    if scrimmage_admit(match_id=match_id) is not Admission.PLAY:
        return False
    now = timezone.now()
    claimed = (
        claimable()
        .filter(pk=match_id)
        .update(
            status=MatchStatus.RUNNING,
            claimed_by=token,
            claimed_at=now,
            heartbeat_at=now,
            started_at=now,
            attempts=F("attempts") + 1,
            error="",
        )
    )
    return claimed == 1


def match_heartbeat(*, match_id: int, token: str) -> bool:
    """Beat for one attempt's match; False once its outcome can no longer be recorded."""
    return match_id in matches_heartbeat(leases={token: match_id})


def matches_heartbeat(*, leases: Mapping[str, int]) -> set[int]:
    """Beat for many attempts at once (claim token: match id); return the matches whose
    attempt's outcome can still be recorded.

    One UPDATE marks alive every match still held by its attempt's token, one SELECT answers
    which are still in a state an outcome is written into (``RECORDABLE``). An attempt that
    lost its claim (the sweeper gave the match back) plays on, since its late outcome still
    counts, but beats for nobody; once the match has ended (finished by another attempt, given
    an ended status by staff, deleted) it is left out of the answer.
    """
    if not leases:
        return set()
    # A token names one attempt of one match, so the pairs need no matching one by one.
    Match.objects.filter(
        pk__in=leases.values(), status=MatchStatus.RUNNING, claimed_by__in=leases
    ).update(heartbeat_at=timezone.now())
    recordable = Match.objects.filter(pk__in=leases.values(), status__in=RECORDABLE)
    return set(recordable.values_list("pk", flat=True))


def reopen_tournament(tournament_id: int | None) -> None:
    """A finished tournament with a match to play or record again runs until that match ends."""
    if tournament_id is None:
        return
    tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
    if tournament.status == TournamentStatus.FINISHED:
        tournament.status = TournamentStatus.RUNNING
        tournament.finished_at = None
        tournament.save(update_fields=["status", "finished_at", "updated_at"])


def after_finish(match: Match) -> None:
    """Hand the ended match to the ratings and its tournament or ladder once committed."""
    if match.status == MatchStatus.FINISHED:
        dispatch.send(Task.RATE_FINISHED_MATCHES)
    if match.tournament_id is not None:
        dispatch.send(Task.ADVANCE_TOURNAMENT, match.tournament_id)
    if match.ladder_id is not None:
        if match.duplicate_group:
            _send_next_rotation(match, match.ladder_id)
        dispatch.send(Task.TOP_UP_LADDERS)
    if match.scrimmage_id is not None:
        scrimmage_send_next(scrimmage_id=match.scrimmage_id)


def _send_next_rotation(match: Match, ladder_id: int) -> None:
    """Send the next queued rotation of a ladder's duplicate group, now that this one ended."""
    following = (
        Match.objects.filter(
            ladder_id=ladder_id,
            duplicate_group=match.duplicate_group,
            status=MatchStatus.QUEUED,
            pk__gt=match.pk,
        )
        .order_by("pk")
        .only("pk", "ladder_id")
        .first()
    )
    if following is not None:
        match_enqueue(match=following)


@transaction.atomic
def match_fail_attempt(*, match_id: int, token: str, error: str) -> str | None:
    """Give a match back after a platform failure: queued again, or failed when out of tries."""
    match = Match.objects.select_for_update().filter(pk=match_id).first()
    if match is None or match.status != MatchStatus.RUNNING or match.claimed_by != token:
        return None
    return release(match, error, VoidReason.PLATFORM_ERROR)


def release(match: Match, error: str, reason: VoidReason) -> str:
    """Give a locked running match back: queued for another attempt, or failed when out of them.

    The attempt's bots may have seen part of its deal (their hands, the cards played), so the
    match is dealt anew from the CSPRNG and the voided deal recorded. The attempt may still be
    playing on (a worker cut off from the database), so the voided seed is shown only once the
    match has ended, and that attempt's outcome may still count
    (tournaments/services/outcomes.py). This is the only place a match is dealt anew, whether or
    not a bot had been called: a failed match keeps the fresh deal for a retry by staff.

    A rotation of a duplicate group keeps its deal, which every rotation of the group plays
    (tournaments/seeds.py): duplicate play is for trusted bots.
    """
    match.error = safe_text(error, 2000)
    match.claimed_by = ""
    if not match.duplicate_group:
        VoidedDeal.objects.create(match=match, seed=match.seed, reason=reason)
        match.seed = new_seed()
    if match.attempts >= match.max_attempts:
        match.status = MatchStatus.FAILED
        match.finished_at = timezone.now()
    else:
        match.status = MatchStatus.QUEUED
        match_enqueue(match=match)
    match.save(update_fields=["status", "error", "claimed_by", "seed", "finished_at", "updated_at"])
    if match.status == MatchStatus.FAILED:
        after_finish(match)
    return match.status


@transaction.atomic
def match_retry(*, match: Match) -> Match:
    """Queue a failed match again with fresh attempts, once staff have dealt with the cause.

    It plays the deal it was given when its last attempt was given up on (``release``)."""
    match = (
        Match.objects.select_for_update(of=("self",)).select_related("tournament").get(pk=match.pk)
    )
    if match.status != MatchStatus.FAILED:
        raise ConflictError(
            f"only a failed match can be retried; match {match.pk} is {match.status}",
        )
    if match.tournament is not None and match.tournament.status == TournamentStatus.CANCELLED:
        raise ConflictError(f"match {match.pk} belongs to a cancelled tournament")
    match.status = MatchStatus.QUEUED
    match.attempts = 0
    match.error = ""
    match.claimed_by = ""
    match.claimed_at = match.heartbeat_at = match.started_at = match.finished_at = None
    match.save(
        update_fields=[
            "status",
            "attempts",
            "error",
            "claimed_by",
            "claimed_at",
            "heartbeat_at",
            "started_at",
            "finished_at",
            "updated_at",
        ]
    )
    reopen_tournament(match.tournament_id)
    match_enqueue(match=match)
    return match


def match_create(
    *, variant_id: int, bot_ids: Sequence[int], seed: int, time_limit_ms: int, **fields: object
) -> Match:
    """Create a queued match with its seats (bot ``bot_ids[i]`` at seat i) and queue it.

    ``fields`` are further columns of the match, its ``time_bank_ms`` among them (0, no bank,
    unless given)."""
    with transaction.atomic():
        fields.setdefault("max_attempts", settings.MATCH_MAX_ATTEMPTS)
        match = Match.objects.create(
            variant_id=variant_id, seed=seed, time_limit_ms=time_limit_ms, **fields
        )
        MatchSeat.objects.bulk_create(
            MatchSeat(match=match, seat=i, bot_id=bot_id) for i, bot_id in enumerate(bot_ids)
        )
        match_enqueue(match=match)
    return match


def matches_create(
    *, fixtures: Sequence[Fixture], competition: Tournament | Ladder, held: bool = False
) -> list[Match]:
    """Create queued matches of a tournament or ladder with their seats from fixtures, and send
    them to the workers; ``held`` ones wait unsent, for their tournament to send them.

    Tournament formats and ladders both create their matches here, each dealt from its fixture's
    seed keyed with the competition's deal salt and the server's secret (tournaments/seeds.py).
    A ladder's duplicate group is sent one rotation at a time: the first now, each next one when
    the previous ends.
    """
    tournament = competition if isinstance(competition, Tournament) else None
    ladder = competition if isinstance(competition, Ladder) else None
    matches = Match.objects.bulk_create(
        Match(
            tournament=tournament,
            ladder=ladder,
            variant_id=competition.variant_id,
            round=f.round,
            seed=deal_seed(f.seed, competition.deal_salt),
            time_limit_ms=competition.time_limit_ms,
            time_bank_ms=competition.time_bank_ms,
            duplicate_group=f.duplicate_group,
            table_round=f.table_round,
            max_attempts=settings.MATCH_MAX_ATTEMPTS,
            unsent=held,
        )
        for f in fixtures
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=m, seat=i, bot_id=bot)
        for m, f in zip(matches, fixtures, strict=True)
        for i, bot in enumerate(f.seats)
    )
    if held:
        return matches
    sent_groups: set[str] = set()
    for match in matches:
        if ladder is not None and match.duplicate_group:
            if match.duplicate_group in sent_groups:
                continue
            sent_groups.add(match.duplicate_group)
        match_enqueue(match=match)
    return matches
