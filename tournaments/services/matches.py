"""Running matches: queue, claim, play, record, retry and sweep, safe under any redelivery.

A match is claimed by a conditional UPDATE carrying a unique token, so one worker plays it at
a time; workers share only the database and the broker: the replay is stored in the database.

A played match's outcome is never thrown away because of storage. It is written in one
transaction, first writer wins: while the match has not finished (held by this attempt, given
back by the sweeper and queued or playing again, or failed) the outcome is written and the
match is finished; once it has finished, another outcome changes nothing, so it is recorded
and rated exactly once. A detail the database refuses (a fault sample) is replaced by a note,
never the outcome; a dropped connection is tried again while the heartbeat goes on; and when
the database stays away longer than the tries, the outcome is handed to the
``tournaments.record_outcome`` task, which tries again until the database is back.

A match given back is dealt anew (``_release``), its earlier deal kept as voided; an attempt of
that deal may still be playing on, so its seed stays hidden until the match has ended. A late
outcome of it still counts while the match has not finished (first writer wins): that deal
becomes the match's deal again, and the one it replaces is voided.

An attempt plays on only while its outcome can count: each heartbeat asks whether the match is
still in a state an outcome is written into (``RECORDABLE``), and once it is not (finished by
another attempt, or given an ended status by staff in the admin) the game is cut on the worker
loop, no bot is called again, nothing is recorded and the worker takes its next match.
Cancelling a tournament never ends a running match this way: it cancels only queued ones
(``tournament_cancel`` in tournaments/services/tournaments.py), so a match under way is played
to the end and counts.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import timedelta
from typing import Any, cast

from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    close_old_connections,
    connection,
    transaction,
)
from django.db.models import Case, Exists, F, OuterRef, Q, QuerySet, Value, When
from django.utils import timezone

from arena.faults import safe_text
from arena.match import MatchOutcome, play_match
from arena.runtime import RunStopped, StopSignal, worker_loop
from arena.seats import HttpSeat
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
    VoidedDeal,
    VoidReason,
)
from tournaments.netpolicy import arena_network_check, bot_limits, bot_network_policy
from tournaments.seeds import deal_seed, new_seed

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 5
# What a fault's sample says when the database refused the sample the bot sent.
SAMPLE_NOT_STORED = "(sample not stored: the database refused it)"
# A played outcome is still written into a match in these states (first writer wins); an
# attempt whose match has left them stops playing (``match_heartbeat``).
RECORDABLE = (MatchStatus.QUEUED, MatchStatus.RUNNING, MatchStatus.FAILED)
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
    """Beat for an attempt's match; False once the attempt's outcome can no longer be recorded.

    One query: the match is marked alive while this attempt holds it, and the answer says
    whether it is still in a state an outcome is written into (``RECORDABLE``). An attempt that
    lost its claim (the sweeper gave the match back) plays on, since its late outcome still
    counts, but beats for nobody; once the match has ended (finished by another attempt, given
    an ended status by staff, deleted) the answer is False.
    """
    held = When(status=MatchStatus.RUNNING, claimed_by=token, then=Value(timezone.now()))
    return (
        Match.objects.filter(pk=match_id, status__in=RECORDABLE).update(
            heartbeat_at=Case(held, default=F("heartbeat_at"))
        )
        == 1
    )


def match_play(*, match_id: int, stop: StopSignal | None = None) -> MatchOutcome:
    """Play a claimed match against its bots over HTTP and return the outcome (no writes).

    The match runs on this process's one event loop and keep-alive pool, beside any other
    matches the process is playing from other threads. A timeout or connection error is charged
    only while the platform's network check from the settings passes (``arena_network_check``).
    Setting ``stop`` cuts the game where it waits, no bot is called again, and ``RunStopped``
    is raised (``WorkerLoop.run``).
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
            network_check=arena_network_check(),
        ),
        stop=stop,
    )


@dataclass(frozen=True)
class FaultRecord:
    """One kind of fault by one seat, as stored: the sample is already safe text."""

    kind: str
    count: int
    sample: str
    latency_ms: int | None


@dataclass(frozen=True)
class SeatRecord:
    """One seat's result, as stored."""

    seat: int
    score: int
    rank: int
    bids_exact: int
    bids_total: int
    faults: int
    disqualified: bool
    fault_records: tuple[FaultRecord, ...]


@dataclass(frozen=True)
class PlayedMatch:
    """What a played match leaves to store: its seats' results and faults, and the replay.

    Plain data, so an outcome the database could not take in time travels in a task message.
    """

    match_id: int
    seats: tuple[SeatRecord, ...]
    replay: dict[str, Any]

    @property
    def seed(self) -> int:
        """The seed this outcome was dealt from, as its replay says."""
        return int(self.replay["seed"])

    @classmethod
    def from_outcome(cls, match_id: int, outcome: MatchOutcome) -> PlayedMatch:
        """The stored form of an outcome; every fault sample passes through ``safe_text``."""
        return cls(
            match_id=match_id,
            seats=tuple(
                SeatRecord(
                    seat=result.seat,
                    score=result.score,
                    rank=result.rank,
                    bids_exact=result.exact_bids,
                    bids_total=result.deals,
                    faults=result.stats.fault_count,
                    disqualified=result.stats.disqualified,
                    fault_records=tuple(
                        FaultRecord(
                            kind=str(kind),
                            count=stat.count,
                            sample=safe_text(stat.sample or stat.detail or "", 500),
                            latency_ms=(
                                round(stat.latency_ms) if stat.latency_ms is not None else None
                            ),
                        )
                        for kind, stat in result.stats.faults.items()
                    ),
                )
                for result in outcome.seats
            ),
            replay=outcome.replay,
        )

    def to_message(self) -> dict[str, Any]:
        """A JSON-ready form for a task message."""
        return asdict(self)

    @classmethod
    def from_message(cls, data: Mapping[str, Any]) -> PlayedMatch:
        """Read back what ``to_message`` wrote."""
        return cls(
            match_id=int(data["match_id"]),
            seats=tuple(
                SeatRecord(
                    **{
                        **seat,
                        "fault_records": tuple(
                            FaultRecord(**fault) for fault in seat["fault_records"]
                        ),
                    }
                )
                for seat in data["seats"]
            ),
            replay=dict(data["replay"]),
        )

    def without_samples(self) -> PlayedMatch:
        """The same outcome with each fault's sample replaced by a note that it was refused."""
        return replace(
            self,
            seats=tuple(
                replace(
                    seat,
                    fault_records=tuple(
                        replace(fault, sample=SAMPLE_NOT_STORED) for fault in seat.fault_records
                    ),
                )
                for seat in self.seats
            ),
        )


@transaction.atomic
def _write_outcome(*, match_id: int, token: str, played: PlayedMatch) -> bool:
    """Write results, faults and the replay of a played match in one transaction.

    First writer wins: the outcome is written while the match has not finished, whoever holds
    it now (this attempt; nobody, the sweeper having queued it again; a later attempt, which
    then cannot record; or nobody because it failed), and the match becomes this attempt's and
    finished. Once finished, it keeps its outcome: a second one changes nothing (False), and a
    repeat of this attempt's own write, whose answer was lost with the connection, only sends
    the follow-up messages again (True).

    The outcome must be of the match's deal or of one of its voided deals (``_release``), whose
    seeds stay hidden until the match has ended. An outcome of a voided deal makes that deal the
    match's again, so the replay verifies against ``match.seed``, and the deal it replaces is
    voided (superseded): an attempt of it may have been under way, and its outcome can no
    longer count.
    """
    match = Match.objects.select_for_update().filter(pk=match_id).first()
    if match is None:
        return False
    if match.status == MatchStatus.FINISHED:
        if match.claimed_by != token:
            return False
        # The outcome stands once; its follow-up messages are safe to send again.
        _after_finish(match)
        return True
    if match.status not in RECORDABLE:
        return False  # cancelled while queued, or ended by staff, before this outcome arrived
    seats = {s.seat: s for s in MatchSeat.objects.filter(match=match)}
    if played.match_id != match.pk or set(seats) != {s.seat for s in played.seats}:
        log.error("match %s: an outcome of another match was not recorded", match.pk)
        return False
    if played.seed != match.seed:
        voided = VoidedDeal.objects.filter(match=match, seed=played.seed).first()
        if voided is None:
            log.error("match %s: an outcome of a deal it never had was not recorded", match.pk)
            return False
        voided.delete()
        VoidedDeal.objects.create(match=match, seed=match.seed, reason=VoidReason.SUPERSEDED)
        match.seed = played.seed
    faults = []
    for result in played.seats:
        seat = seats[result.seat]
        seat.score = result.score
        seat.rank = result.rank
        seat.bids_exact = result.bids_exact
        seat.bids_total = result.bids_total
        seat.faults = result.faults
        seat.disqualified = result.disqualified
        faults += [
            SeatFault(
                seat=seat,
                kind=fault.kind,
                count=fault.count,
                sample=fault.sample,
                latency_ms=fault.latency_ms,
            )
            for fault in result.fault_records
        ]
    MatchSeat.objects.bulk_update(
        seats.values(), ["score", "rank", "bids_exact", "bids_total", "faults", "disqualified"]
    )
    SeatFault.objects.bulk_create(faults)
    Replay.objects.create(match=match, data=played.replay)
    if match.status == MatchStatus.FAILED:
        # Given up on before this outcome arrived: it ends as a retried match would.
        _reopen_tournament(match.tournament_id)
    match.status = MatchStatus.FINISHED
    match.claimed_by = token
    match.error = ""
    match.finished_at = timezone.now()
    match.save(update_fields=["status", "claimed_by", "error", "seed", "finished_at", "updated_at"])
    _after_finish(match)
    return True


def _reopen_tournament(tournament_id: int | None) -> None:
    """A finished tournament with a match to play or record again runs until that match ends."""
    if tournament_id is None:
        return
    tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
    if tournament.status == TournamentStatus.FINISHED:
        tournament.status = TournamentStatus.RUNNING
        tournament.finished_at = None
        tournament.save(update_fields=["status", "finished_at", "updated_at"])


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
    return _release(match, error, VoidReason.PLATFORM_ERROR)


def _release(match: Match, error: str, reason: VoidReason) -> str:
    """Give a locked running match back: queued for another attempt, or failed when out of them.

    The attempt's bots may have seen part of its deal (their hands, the cards played), so the
    match is dealt anew from the CSPRNG and the voided deal recorded. The attempt may still be
    playing on (a worker cut off from the database), so the voided seed is shown only once the
    match has ended, and that attempt's outcome may still count (``_write_outcome``). This is
    the only place a match is dealt anew, whether or not a bot had been called: a failed match
    keeps the fresh deal for a retry by staff.

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
                status = _release(
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
    hold match messages only; config/settings.py routes every other task to the control
    queue). A match sent again waits the full time before it can be sent once more, so
    duplicates stay few, and a duplicate delivery finds the match claimed and does nothing.
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
        if rows:
            log.warning(
                "%s matches waited queued with %s messages missing from their queue; sent %s again",
                waiting,
                missing,
                len(rows),
            )
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
    """Beat for a running match from a side thread, so a dead worker is noticed by the sweeper.

    A beat answering False ends the heartbeat; ``on_false``, if given, is called then (from the
    heartbeat's thread).
    """

    def __init__(
        self,
        beat: Callable[[], bool],
        every: float = HEARTBEAT_SECONDS,
        *,
        on_false: Callable[[], object] | None = None,
    ) -> None:
        self._beat = beat
        self._every = every
        self._on_false = on_false
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
                        if self._on_false is not None:
                            self._on_false()
                        return
                except DatabaseError as exc:
                    # A dropped connection or a database restart: beat again on a fresh
                    # connection next time rather than let the sweeper take a healthy match.
                    log.warning("heartbeat missed, the database answered: %s", exc)
                    connection.close()
        finally:
            connection.close()


def match_run(*, match_id: int, token: str | None = None) -> str:
    """Claim, play and record one match; return what happened (for logs and tests).

    Once the heartbeat finds that the match has ended without this attempt (finished by
    another, or given an ended status by staff), its outcome could no longer count: the game is
    cut at once, no bot is called again, nothing is recorded, and the answer is "match-ended".
    """
    token = token or claim_token()
    if not match_claim(match_id=match_id, token=token):
        return "not-claimable"
    stop = StopSignal()
    # The heartbeat goes on while the outcome is written, so the sweeper does not take a
    # played match away while its final write is tried again.
    with Heartbeat(lambda: match_heartbeat(match_id=match_id, token=token), on_false=stop.set):
        try:
            outcome = match_play(match_id=match_id, stop=stop)
        except RunStopped:
            log.info(
                "match %s ended without this attempt while it played; its bots are called no "
                "more and nothing is recorded",
                match_id,
            )
            return "match-ended"
        except Exception as exc:  # a platform failure: never blamed on a bot
            log.exception("match %s failed on the platform side", match_id)
            close_old_connections()
            status = match_fail_attempt(match_id=match_id, token=token, error=repr(exc))
            return status or "lost-claim"
        played = PlayedMatch.from_outcome(match_id, outcome)
        return _record_with_retries(match_id=match_id, token=token, played=played)


def match_record_outcome(*, match_id: int, token: str, played: PlayedMatch) -> bool:
    """Record a played match, first writer wins (``_write_outcome``); a detail the database
    refuses is dropped, never the outcome.

    A dropped connection (``OperationalError``, ``InterfaceError``) is left to the caller to
    try again. Any other refusal (a value the database will not store, whatever a bot sent)
    is not the outcome's fault: the outcome is written again with each fault's sample
    replaced by a note.
    """
    try:
        return _write_outcome(match_id=match_id, token=token, played=played)
    except (OperationalError, InterfaceError):
        raise
    except (DatabaseError, UnicodeError) as exc:
        log.warning(
            "match %s: the database refused a detail (%s); recording it without fault samples",
            match_id,
            safe_text(repr(exc), 500),
        )
        return _write_outcome(match_id=match_id, token=token, played=played.without_samples())


def _record_with_retries(*, match_id: int, token: str, played: PlayedMatch) -> str:
    """Record a played match, trying again on a fresh connection after a transient error.

    The write is first-writer-wins, so a try after one that did commit changes nothing. When
    every try fails the outcome goes to the ``record_outcome`` task, which tries again until
    the database is back; only an outcome the database refuses even without its samples (a
    platform fault) gives the match back to be played again.
    """
    from tournaments.tasks import record_outcome

    tries = settings.MATCH_RECORD_TRIES
    for attempt in range(1, tries + 1):
        try:
            recorded = match_record_outcome(match_id=match_id, token=token, played=played)
            return "recorded" if recorded else "match-ended"
        except (OperationalError, InterfaceError) as exc:
            log.warning(
                "recording match %s failed (try %s of %s): %s", match_id, attempt, tries, exc
            )
            connection.close()
            if attempt < tries:
                time.sleep(settings.MATCH_RECORD_BACKOFF_SECONDS * 2 ** (attempt - 1))
        except (DatabaseError, UnicodeError) as exc:
            log.exception("match %s: the database refused its outcome", match_id)
            connection.close()
            status = match_fail_attempt(match_id=match_id, token=token, error=repr(exc))
            return status or "lost-claim"
    log.error("match %s: the database is away; its outcome goes to record_outcome", match_id)
    record_outcome.delay(match_id, token, played.to_message())
    return "handed-off"


@transaction.atomic
def match_retry(*, match: Match) -> Match:
    """Queue a failed match again with fresh attempts, once staff have dealt with the cause.

    It plays the deal it was given when its last attempt was given up on (``_release``)."""
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
    _reopen_tournament(match.tournament_id)
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


def matches_create(*, fixtures: Sequence[Fixture], competition: Tournament | Ladder) -> list[Match]:
    """Create queued matches of a tournament or ladder with their seats from fixtures, and send
    them to the workers.

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
