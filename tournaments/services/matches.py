"""Running matches: queue, claim, play, record, retry and sweep, safe under any redelivery.

A match is claimed by a conditional UPDATE carrying a unique token, so one worker plays it at
a time; the outcome is written in one transaction only while that token still holds the
claim, so a late or duplicate worker changes nothing. Workers share only the database and the
broker: the replay is stored in the database.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import cast

from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    close_old_connections,
    connection,
    transaction,
)
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from arena.faults import safe_text
from arena.match import MatchOutcome, play_match
from arena.seats import HttpSeat
from arena.transport import worker_loop
from config.celery_app import app as celery_app
from engine.variant import Variant as EngineVariant
from tournaments.errors import ApplicationError
from tournaments.formats import Fixture
from tournaments.models import (
    Ladder,
    LadderStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    SeatFault,
    Tournament,
    TournamentStatus,
)
from tournaments.netpolicy import bot_limits, bot_network_policy
from tournaments.seeds import deal_seed

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 5
# The final write of a played match is tried this many times across dropped connections,
# waiting RECORD_BACKOFF_SECONDS, then twice that, and so on, between tries.
RECORD_TRIES = 5
RECORD_BACKOFF_SECONDS = 0.5
# At most this many lost matches of a kind are sent again by one sweep.
RESEND_BATCH = 1000


def claim_token() -> str:
    """A token unique to this attempt: host, process and a random part."""
    return f"{socket.gethostname()[:100]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def match_enqueue(*, match: Match) -> None:
    """Send the match to the workers once the current transaction commits.

    Ladder matches go to the ladder queue, tournament matches to the matches queue
    (config/settings.py routes the two tasks).
    """
    from tournaments.tasks import run_ladder_match, run_match

    match_id = match.pk
    task = run_ladder_match if match.ladder_id is not None else run_match
    transaction.on_commit(lambda: task.delay(match_id))


def _claimable() -> QuerySet[Match]:
    """Queued matches a worker may claim now (one definition for claiming and re-sending)."""
    # A ladder plays a duplicate group's rotations one after another, so its bots are never
    # in two matches at once: a rotation waits while an earlier one is queued or running.
    earlier_rotation = Match.objects.filter(
        ladder_id=OuterRef("ladder_id"),
        duplicate_group=OuterRef("duplicate_group"),
        pk__lt=OuterRef("pk"),
        status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING],
    )
    return (
        Match.objects.filter(status=MatchStatus.QUEUED, attempts__lt=F("max_attempts"))
        .exclude(tournament__status__in=[TournamentStatus.PAUSED, TournamentStatus.CANCELLED])
        .exclude(ladder__status=LadderStatus.PAUSED)
        .exclude(Q(ladder__isnull=False) & ~Q(duplicate_group="") & Exists(earlier_rotation))
    )


def match_claim(*, match_id: int, token: str) -> bool:
    """Claim a queued match for this attempt; False when it is not (or no longer) claimable."""
    now = timezone.now()
    claimed = (
        _claimable()
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
    """Mark a running match as alive; False when this attempt lost its claim."""
    return (
        Match.objects.filter(pk=match_id, status=MatchStatus.RUNNING, claimed_by=token).update(
            heartbeat_at=timezone.now()
        )
        == 1
    )


def match_play(*, match_id: int) -> MatchOutcome:
    """Play a claimed match against its bots over HTTP and return the outcome (no writes).

    The match runs on this process's one event loop and keep-alive pool, beside any other
    matches the process is playing from other threads.
    """
    match = Match.objects.select_related("variant").get(pk=match_id)
    seats = list(match.seats.select_related("bot").order_by("seat"))
    variant = EngineVariant.from_dict(match.variant.options)
    loop = worker_loop()
    # The pool's own limits (grace, answer cap) are the deployment's; each call is told the
    # match's time control.
    client = loop.client(limits=bot_limits(), policy=bot_network_policy())
    http_seats = [
        HttpSeat(client, s.bot.endpoint_url, s.bot.secret, label=s.bot.name) for s in seats
    ]
    return loop.run(
        play_match(
            variant=variant,
            seed=match.seed,
            seats=http_seats,
            limits=bot_limits(match.time_limit_ms),
            match_id=str(match.pk),
        )
    )


@transaction.atomic
def match_record_outcome(*, match_id: int, token: str, outcome: MatchOutcome) -> bool:
    """Write results, faults and the replay in one transaction, if this attempt holds the claim."""
    match = Match.objects.select_for_update().filter(pk=match_id).first()
    if match is None or match.claimed_by != token:
        return False
    if match.status == MatchStatus.FINISHED:
        # This attempt's write committed but the answer was lost with the connection: the
        # outcome stands once; send its follow-up messages again, which are safe to repeat.
        _after_finish(match)
        return True
    if match.status != MatchStatus.RUNNING:
        return False
    seats = {s.seat: s for s in MatchSeat.objects.filter(match=match)}
    faults = []
    for result in outcome.seats:
        seat = seats[result.seat]
        seat.score = result.score
        seat.rank = result.rank
        seat.bids_exact = result.exact_bids
        seat.bids_total = result.deals
        seat.faults = result.stats.fault_count
        seat.disqualified = result.stats.disqualified
        faults += [
            SeatFault(
                seat=seat,
                kind=kind,
                count=stat.count,
                sample=safe_text(stat.sample or stat.detail or "", 500),
                latency_ms=round(stat.latency_ms) if stat.latency_ms is not None else None,
            )
            for kind, stat in result.stats.faults.items()
        ]
    MatchSeat.objects.bulk_update(
        seats.values(), ["score", "rank", "bids_exact", "bids_total", "faults", "disqualified"]
    )
    SeatFault.objects.bulk_create(faults)
    Replay.objects.create(match=match, data=outcome.replay)
    match.status = MatchStatus.FINISHED
    match.finished_at = timezone.now()
    match.save(update_fields=["status", "finished_at", "updated_at"])
    _after_finish(match)
    return True


def _after_finish(match: Match) -> None:
    """Hand the ended match to the ratings and its tournament or ladder once committed."""
    from tournaments.services.ladders import ladders_top_up_soon
    from tournaments.tasks import advance_tournament, rate_finished_matches

    if match.status == MatchStatus.FINISHED:
        transaction.on_commit(rate_finished_matches.delay)
    if match.tournament_id is not None:
        tournament_id = match.tournament_id
        transaction.on_commit(lambda: advance_tournament.delay(tournament_id))
    if match.ladder_id is not None:
        if match.duplicate_group:
            _send_next_rotation(match, match.ladder_id)
        ladders_top_up_soon()


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
    return _release(match, error)


def _release(match: Match, error: str) -> str:
    match.error = error[:2000]
    match.claimed_by = ""
    if match.attempts >= match.max_attempts:
        match.status = MatchStatus.FAILED
        match.finished_at = timezone.now()
    else:
        match.status = MatchStatus.QUEUED
        match_enqueue(match=match)
    match.save(update_fields=["status", "error", "claimed_by", "finished_at", "updated_at"])
    if match.status == MatchStatus.FAILED:
        _after_finish(match)
    return match.status


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
                status = _release(match, "the worker stopped sending heartbeats")
                released["requeued" if status == MatchStatus.QUEUED else "failed"] += 1
    released["resent"] = _resend_lost()
    return released


def _resend_lost() -> int:
    """Re-send queued matches whose message a broker lost; return how many were sent.

    A claimable match waiting longer than ``MATCH_RESEND_SECONDS`` may have lost its message
    (a broker restarted without its data, a worker killed holding it). Only as many as its
    queue lacks are sent again, oldest first: a queue holding at least one message per
    claimable match is a backlog being worked through, and is left alone. A match sent again
    waits the full time before it can be sent once more, so duplicates stay few, and a
    duplicate delivery finds the match claimed and does nothing.
    """
    cutoff = timezone.now() - timedelta(seconds=settings.MATCH_RESEND_SECONDS)
    sent = 0
    for kind, matches in (
        (settings.TASK_QUEUE_KINDS["tournaments.run_match"], _claimable().filter(ladder=None)),
        (
            settings.TASK_QUEUE_KINDS["tournaments.run_ladder_match"],
            _claimable().exclude(ladder=None),
        ),
    ):
        waiting = matches.count()
        if waiting == 0:
            continue
        missing = waiting - messages_waiting(f"{celery_app.conf.task_default_queue}.{kind}")
        if missing <= 0:
            continue
        rows = list(
            matches.filter(updated_at__lt=cutoff)
            .order_by("updated_at", "pk")
            .values_list("pk", "ladder_id")[: min(missing, RESEND_BATCH)]
        )
        with transaction.atomic():
            Match.objects.filter(pk__in=[pk for pk, _ in rows]).update(updated_at=timezone.now())
            for match_id, ladder_id in rows:
                match_enqueue(match=Match(pk=match_id, ladder_id=ladder_id))
        sent += len(rows)
    return sent


def messages_waiting(queue: str) -> int:
    """Messages in the broker's queue, declared as the workers declare it (no-op if it exists)."""
    with celery_app.connection_for_read() as conn:
        # kombu's Queue.queue_declare answers the broker's (name, messages, consumers); its
        # type stubs say a name.
        _, count, _ = cast(
            "tuple[str, int, int]",
            celery_app.amqp.queues[queue](conn.default_channel).queue_declare(),
        )
    return count


class Heartbeat:
    """Beat for a running match from a side thread, so a dead worker is noticed by the sweeper."""

    def __init__(self, beat: Callable[[], bool], every: float = HEARTBEAT_SECONDS) -> None:
        self._beat = beat
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._every):
                try:
                    if not self._beat():
                        return
                except DatabaseError as exc:
                    # A dropped connection or a database restart: beat again on a fresh
                    # connection next time rather than let the sweeper take a healthy match.
                    log.warning("heartbeat missed, the database answered: %s", exc)
                    connection.close()
        finally:
            connection.close()


def match_run(*, match_id: int, token: str | None = None) -> str:
    """Claim, play and record one match; return what happened (for logs and tests)."""
    token = token or claim_token()
    if not match_claim(match_id=match_id, token=token):
        return "not-claimable"
    try:
        with Heartbeat(lambda: match_heartbeat(match_id=match_id, token=token)):
            outcome = match_play(match_id=match_id)
    except Exception as exc:  # a platform failure: never blamed on a bot
        log.exception("match %s failed on the platform side", match_id)
        close_old_connections()
        return match_fail_attempt(match_id=match_id, token=token, error=repr(exc)) or "lost-claim"
    recorded = _record_with_retries(match_id=match_id, token=token, outcome=outcome)
    return "recorded" if recorded else "lost-claim"


def _record_with_retries(*, match_id: int, token: str, outcome: MatchOutcome) -> bool:
    """Record a played match, trying again on a fresh connection after a transient error.

    The write is conditional on the claim token, so a try after one that did commit changes
    nothing and a played match is not thrown away for a dropped connection.
    """
    for tries in range(1, RECORD_TRIES):
        try:
            return match_record_outcome(match_id=match_id, token=token, outcome=outcome)
        except (OperationalError, InterfaceError) as exc:
            log.warning(
                "recording match %s failed (try %s), trying again: %s", match_id, tries, exc
            )
            connection.close()
            time.sleep(RECORD_BACKOFF_SECONDS * 2 ** (tries - 1))
    return match_record_outcome(match_id=match_id, token=token, outcome=outcome)


@transaction.atomic
def match_retry(*, match: Match) -> Match:
    """Queue a failed match again with fresh attempts, once staff have dealt with the cause."""
    match = (
        Match.objects.select_for_update(of=("self",)).select_related("tournament").get(pk=match.pk)
    )
    if match.status != MatchStatus.FAILED:
        raise ApplicationError(
            f"only a failed match can be retried; match {match.pk} is {match.status}",
            code="conflict",
            status=409,
        )
    if match.tournament is not None and match.tournament.status == TournamentStatus.CANCELLED:
        raise ApplicationError(
            f"match {match.pk} belongs to a cancelled tournament", code="conflict", status=409
        )
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
    tournament = match.tournament
    if tournament is not None and tournament.status == TournamentStatus.FINISHED:
        # The tournament has a match to play again: it runs until that match ends.
        tournament.status = TournamentStatus.RUNNING
        tournament.finished_at = None
        tournament.save(update_fields=["status", "finished_at", "updated_at"])
    match_enqueue(match=match)
    return match


def match_create(
    *, variant_id: int, bot_ids: Sequence[int], seed: int, time_limit_ms: int, **fields: object
) -> Match:
    """Create a queued match with its seats (bot ``bot_ids[i]`` at seat i) and queue it."""
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
    *,
    fixtures: Sequence[Fixture],
    variant_id: int,
    time_limit_ms: int,
    tournament: Tournament | None = None,
    ladder: Ladder | None = None,
) -> list[Match]:
    """Create queued matches with their seats from fixtures, and send them to the workers.

    Tournament formats and ladders both create their matches here, each dealt from its fixture's
    seed keyed with the server's secret (tournaments/seeds.py). A ladder's duplicate group
    is sent one rotation at a time: the first now, each next one when the previous ends.
    """
    matches = Match.objects.bulk_create(
        Match(
            tournament=tournament,
            ladder=ladder,
            variant_id=variant_id,
            round=f.round,
            seed=deal_seed(f.seed),
            time_limit_ms=time_limit_ms,
            duplicate_group=f.duplicate_group,
            max_attempts=settings.MATCH_MAX_ATTEMPTS,
        )
        for f in fixtures
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=m, seat=i, bot_id=bot)
        for m, f in zip(matches, fixtures, strict=True)
        for i, bot in enumerate(f.seats)
    )
    sent_groups: set[str] = set()
    for match in matches:
        if ladder is not None and match.duplicate_group:
            if match.duplicate_group in sent_groups:
                continue
            sent_groups.add(match.duplicate_group)
        match_enqueue(match=match)
    return matches
