"""A played match's stored form, and writing it: first writer wins, exactly once.

A played match's outcome is never thrown away because of storage. It is written in one
transaction, first writer wins: while the match has not finished (held by this attempt, given
back by the sweeper and queued or playing again, or failed) the outcome is written and the
match is finished; once it has finished, another outcome changes nothing, so it is recorded
and rated exactly once. A detail the database refuses (a fault sample) is replaced by a note,
never the outcome. Tries on a dropped connection, and the hand-off to the
``tournaments.record_outcome`` task when the database stays away, are the run's
(tournaments/services/runs.py).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from django.db import DatabaseError, InterfaceError, OperationalError, transaction
from django.utils import timezone

from arena.faults import safe_text
from arena.match import MatchOutcome
from tournaments.models import (
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    SeatFault,
    VoidedDeal,
    VoidReason,
)
from tournaments.services.analytics import seat_tallies_write
from tournaments.services.bots import bots_refusals_counted, bots_refused_signature
from tournaments.services.matches import RECORDABLE, after_finish, reopen_tournament

log = logging.getLogger(__name__)

# What a fault's sample says when the database refused the sample the bot sent.
SAMPLE_NOT_STORED = "(sample not stored: the database refused it)"


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
    # Defaults to False so an outcome queued before this field existed still reads back.
    refused_every_request: bool = False


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
                    refused_every_request=result.stats.refused_every_request,
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

    First writer wins: the outcome is written while the match has not finished, whoever holds it
    now (this attempt; nobody, the sweeper having queued it again; a later attempt, which then
    cannot record; or nobody because it failed), and the match becomes this attempt's and
    finished. Once finished, it keeps its outcome: a second one changes nothing (False), and a
    repeat of this attempt's own write, whose answer was lost with the connection, only sends
    the follow-up messages again (True).

    The outcome must be of the match's deal or of one of its voided deals (``release`` in
    tournaments/services/matches.py), whose seeds stay hidden until the match has ended. An
    outcome of a voided deal makes that deal the match's again, so the replay verifies against
    ``match.seed``, and the deal it replaces is voided (superseded): an attempt of it may have
    been under way, and its outcome can no longer count.
    """
    match = Match.objects.select_for_update().filter(pk=match_id).first()
    if match is None:
        return False
    if match.status == MatchStatus.FINISHED:
        if match.claimed_by != token:
            return False
        # The outcome stands once; its follow-up messages are safe to send again.
        after_finish(match)
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
    refused = [seats[r.seat].bot_id for r in played.seats if r.refused_every_request]
    counted = bots_refusals_counted(bot_ids=refused, match_id=match.pk)
    faults = []
    for result in played.seats:
        seat = seats[result.seat]
        seat.score = result.score
        seat.rank = result.rank
        seat.bids_exact = result.bids_exact
        seat.bids_total = result.bids_total
        seat.faults = result.faults
        seat.disqualified = result.disqualified
        seat.refused_every_request = result.refused_every_request
        seat.refusal_counted = seat.bot_id in counted
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
        seats.values(),
        [
            "score",
            "rank",
            "bids_exact",
            "bids_total",
            "faults",
            "disqualified",
            "refused_every_request",
            "refusal_counted",
        ],
    )
    if refused:
        bots_refused_signature(bot_ids=refused, match_id=match.pk)
    SeatFault.objects.bulk_create(faults)
    Replay.objects.create(match=match, data=played.replay)
    seat_tallies_write(match=match, seats=seats.values(), replay=played.replay)
    if match.status == MatchStatus.FAILED:
        # Given up on before this outcome arrived: it ends as a retried match would.
        reopen_tournament(match.tournament_id)
    match.status = MatchStatus.FINISHED
    match.claimed_by = token
    match.error = ""
    match.finished_at = timezone.now()
    match.save(update_fields=["status", "claimed_by", "error", "seed", "finished_at", "updated_at"])
    after_finish(match)
    return True


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
