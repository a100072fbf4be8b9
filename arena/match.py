"""Play one match between seats (HTTP bots or in-process players) through the engine.

A faulty seat gets the documented fallback and a recorded fault; past the fault threshold it
is no longer called and ranks last for ratings. Anything that is not a ``BotFault`` is the
platform's failure and propagates, so it is never blamed on a bot.

A timeout or connection error may be the worker's own network failing rather than the bot. Given
a ``network_check`` (``netcheck.py``: the platform's own infrastructure, never a bot), the runner
asks it before charging one: when it passes, the fault is charged; when it fails, nothing is
charged, the runner checks again about every second and, once it passes, asks the seat the same
question again. Outages add up over the match; past ``Limits.outage_wait_s`` in all the match
fails with ``ArenaNetworkError``, to be played again. Without a check every fault is charged.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena.faults import (
    ArenaNetworkError,
    BotConnectionError,
    BotFault,
    BotTimeout,
    FaultKind,
    MatchTimeSpent,
)
from arena.limits import Limits
from arena.netcheck import NetworkCheck
from arena.protocol import (
    MessageType,
    decision_message,
    fallback_bid,
    fallback_card,
    parse_bid,
    parse_card,
    result_message,
)
from arena.timebank import TimeBank
from arena.transport import CallResult
from engine.game import Game, Phase
from engine.observation import observe
from engine.scoring import rating_ranks
from engine.variant import Bidding, Variant

# Read once per decision or more: on Python 3.11 a member read off its Enum class costs several
# times a module name's read, so the per-decision path reads these names instead.
_BID, _PLAY = MessageType.BID, MessageType.PLAY
_BIDDING, _OVER = Phase.BID, Phase.OVER
_REFUSED = str(FaultKind.REFUSED)
# The faults an outage of the worker's own network also causes; any other fault needs an answer.
_NETWORK_FAULTS = (BotTimeout, BotConnectionError)
# While the worker's network is down, check it again this often.
CHECK_EVERY_S = 1.0


class Seat(Protocol):
    """Something that answers protocol messages for one seat."""

    label: str

    async def call(self, message: dict[str, Any], time_limit_ms: int) -> CallResult:
        """Answer ``message`` with the parsed JSON answer and its latency, or raise BotFault.

        ``time_limit_ms`` is the time the call may take before the grace: for a decision, the
        message's ``time_limit_ms`` plus the seat's bank left (``TimeBank.allowed_ms``).
        """
        ...


@dataclass
class FaultStat:
    """Faults of one kind by one seat in one match."""

    count: int = 0
    sample: str | None = None
    detail: str = ""
    latency_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form."""
        return {
            "count": self.count,
            "sample": self.sample,
            "detail": self.detail,
            "latency_ms": self.latency_ms,
        }


@dataclass
class SeatStats:
    """What one seat did in a match, beyond its score."""

    calls: int = 0
    latency_total_ms: float = 0.0
    latency_max_ms: float = 0.0
    faults: dict[str, FaultStat] = field(default_factory=dict)
    fault_count: int = 0
    disqualified: bool = False

    def record_latency(self, latency_ms: float) -> None:
        """Count one answered call."""
        self.calls += 1
        self.latency_total_ms += latency_ms
        self.latency_max_ms = max(self.latency_max_ms, latency_ms)

    def record_fault(self, fault: BotFault, threshold: int) -> None:
        """Count a fault; keep the first sample of each kind; disqualify past the threshold."""
        stat = self.faults.setdefault(str(fault.kind), FaultStat())
        stat.count += 1
        if stat.count == 1:
            stat.sample, stat.detail, stat.latency_ms = fault.sample, fault.detail, fault.latency_ms
        self.fault_count += 1
        if self.fault_count >= threshold:
            self.disqualified = True

    @property
    def refused_every_request(self) -> bool:
        """Whether the seat answered no request but refused each one's signature (401 or 403):
        a bot checking with another secret, or one refusing from its first request on."""
        return self.calls == 0 and self.fault_count > 0 and set(self.faults) == {_REFUSED}

    @property
    def mean_latency_ms(self) -> float | None:
        """Mean latency of answered calls."""
        return self.latency_total_ms / self.calls if self.calls else None


@dataclass
class SeatOutcome:
    """One seat's result in a finished match."""

    seat: int
    label: str
    score: int
    rank: int
    rating_rank: int
    exact_bids: int
    deals: int
    stats: SeatStats
    bank: TimeBank

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form."""
        s = self.stats
        return {
            "seat": self.seat,
            "label": self.label,
            "score": self.score,
            "rank": self.rank,
            "rating_rank": self.rating_rank,
            "exact_bids": self.exact_bids,
            "deals": self.deals,
            "calls": s.calls,
            "mean_latency_ms": s.mean_latency_ms,
            "max_latency_ms": s.latency_max_ms,
            "fault_count": s.fault_count,
            "disqualified": s.disqualified,
            "refused_every_request": s.refused_every_request,
            "faults": {kind: stat.to_dict() for kind, stat in s.faults.items()},
            "timing": self.bank.summary(),
        }


@dataclass
class MatchOutcome:
    """Everything a finished match leaves: standings, per-seat faults and the replay."""

    match_id: str
    seats: list[SeatOutcome]
    replay: dict[str, Any]
    duration_s: float

    @property
    def rating_ranks(self) -> list[int]:
        """Ranks for ratings: shared ranks by total, disqualified seats last."""
        return [s.rating_rank for s in self.seats]

    def to_dict(self) -> dict[str, Any]:
        """Return the stored form (replay apart)."""
        return {
            "match_id": self.match_id,
            "duration_s": self.duration_s,
            "seats": [s.to_dict() for s in self.seats],
        }


class MatchRunner:
    """Drives one game: asks the seat to act, checks the answer, applies it."""

    def __init__(
        self,
        *,
        variant: Variant,
        seed: int,
        seats: Sequence[Seat],
        limits: Limits,
        match_id: str,
        network_check: NetworkCheck | None = None,
    ) -> None:
        self.game = Game(variant, len(seats), seed)
        self.seats = list(seats)
        self.limits = limits
        self.match_id = match_id
        self.stats = [SeatStats() for _ in seats]
        self.banks = [TimeBank(limits.time_bank_ms) for _ in seats]
        self.time_limits = {kind: limits.time_limit_for(kind) for kind in (_BID, _PLAY)}
        self.network_check = network_check
        # The outage being waited out, shared by every ask that fails during it, and the seconds
        # of outage the match has waited so far (capped by ``limits.outage_wait_s``).
        self.outage: asyncio.Task[None] | None = None
        self.outage_s = 0.0
        # One record per bid and card, for the replay: where, how long, and any fallback.
        self.decisions: list[dict[str, Any]] = []
        # Each seat's time in calls (answers and faults), and the seats cut past the match's cap
        # on its duration (``Limits.max_match_s``).
        self.spent_ms = [0.0] * len(seats)
        self.cut: set[int] = set()
        self.started = time.perf_counter()

    async def run(self) -> MatchOutcome:
        """Play the match to the end and return its outcome."""
        started = self.started = time.perf_counter()
        game = self.game
        closed = game.variant.bidding is Bidding.CLOSED
        while (phase := game.phase) is not _OVER:
            if phase is _BIDDING and closed:
                await self._closed_bidding()
            elif phase is _BIDDING:
                game.bid(await self._decide(game.acting_seat, _BID, game.legal_bids()))
            else:
                game.play(await self._decide(game.acting_seat, _PLAY, game.legal_cards()))
        await self._send_results()
        return self._outcome(time.perf_counter() - started)

    async def _closed_bidding(self) -> None:
        """Ask every seat for its bid at once: nobody sees another bid before all are made."""
        game = self.game
        order = [(game.acting_seat + i) % game.players for i in range(game.players)]
        legal = game.legal_bids()  # without the hook, the same for every seat
        asks = [asyncio.ensure_future(self._decide(s, _BID, legal, to_act=s)) for s in order]
        try:
            bids = await asyncio.gather(*asks)
        except BaseException:
            # A platform failure in one ask ends the match: the others must not go on alone.
            for ask in asks:
                ask.cancel()
            await asyncio.gather(*asks, return_exceptions=True)
            raise
        for bid in bids:
            game.bid(bid)

    async def _decide(
        self, seat: int, kind: MessageType, legal: Sequence[Any], to_act: int | None = None
    ) -> Any:
        stats = self.stats[seat]
        bank = self.banks[seat]
        bidding = kind is _BID
        game = self.game
        record: dict[str, Any] = {
            "deal": len(game.deals),
            "trick": None if bidding else len(game.deals[-1].winners) + 1,
            "seat": seat,
            "type": str(kind),
            "latency_ms": None,
            "fallback": False,
            "fault": None,
            # The seat's bank left once this decision is charged.
            "time_bank_ms": bank.left_ms,
        }
        self.decisions.append(record)
        if stats.disqualified:
            record.update(fallback=True, fault="disqualified")
            return fallback_bid(legal) if bidding else fallback_card(legal)
        if self._past_its_share(seat):
            cap = self.limits.max_match_s
            stats.record_fault(
                MatchTimeSpent(
                    f"the match passed its cap of {cap:g} s, and this seat had used "
                    f"{self.spent_ms[seat] / 1000:.1f} s of it, at least its share"
                ),
                self.limits.max_faults_per_match,
            )
            record.update(fallback=True, fault=str(FaultKind.MATCH_TIME))
            return fallback_bid(legal) if bidding else fallback_card(legal)
        time_limit_ms = self.time_limits[kind]
        observation = observe(game, seat)
        if to_act is not None:
            observation["to_act"] = to_act
        message = decision_message(
            kind,
            observation,
            legal,
            match_id=self.match_id,
            time_limit_ms=time_limit_ms,
            time_bank_ms=bank.left_ms,
        )
        while True:
            latency_ms: float | None = None
            try:
                result = await self.seats[seat].call(message, bank.allowed_ms(time_limit_ms))
                latency_ms = result.latency_ms
                self.spent_ms[seat] += latency_ms
                bank.charge(time_limit_ms, latency_ms)
                record["time_bank_ms"] = bank.left_ms
                record["latency_ms"] = round(latency_ms, 1)
                stats.record_latency(latency_ms)
                answer = result.data
                return parse_bid(answer, legal) if bidding else parse_card(answer, legal)
            except BotFault as fault:
                if isinstance(fault, _NETWORK_FAULTS) and await self._outage_waited_out():
                    continue  # the same question again, as a fresh request
                if latency_ms is None and fault.latency_ms is not None:
                    self.spent_ms[seat] += fault.latency_ms
                if fault.latency_ms is None:
                    fault.latency_ms = latency_ms
                elif latency_ms is None:  # the call itself faulted, after this long
                    bank.charge(time_limit_ms, fault.latency_ms)
                    record["time_bank_ms"] = bank.left_ms
                stats.record_fault(fault, self.limits.max_faults_per_match)
                record.update(fallback=True, fault=str(fault.kind))
                if fault.latency_ms is not None:
                    record["latency_ms"] = round(fault.latency_ms, 1)
                return fallback_bid(legal) if bidding else fallback_card(legal)

    def _past_its_share(self, seat: int) -> bool:
        """Whether the seat is cut: the match has passed its cap on duration and the seat has
        used at least its share of the time so far (the elapsed time over the seats).

        At least one seat has always used its share, so the slowest is cut first; the others
        play on at their pace while they stay under theirs, which bounds the match's length."""
        cap = self.limits.max_match_s
        if seat in self.cut:
            return True
        if cap is None:
            return False
        elapsed = time.perf_counter() - self.started
        if elapsed < cap or self.spent_ms[seat] / 1000 < elapsed / len(self.seats):
            return False
        self.cut.add(seat)
        return True

    async def _outage_waited_out(self) -> bool:
        """After a timeout or connection error: whether it was the platform's network, now back.

        False when there is no check or it passes: the fault is the bot's. Otherwise wait until
        the check passes again, joining the outage another ask is already waiting out, and
        return True: the decision is asked again once per outage the check confirmed, and a bot
        cannot make the check fail.
        """
        check = self.network_check
        if check is None:
            return False
        if self.outage is None or self.outage.done():
            started = asyncio.get_running_loop().time()
            if await check():
                return False
            if self.outage is None or self.outage.done():
                self.outage = asyncio.ensure_future(self._wait_out(check, started))
        await self.outage
        return True

    async def _wait_out(self, check: NetworkCheck, started: float) -> None:
        """Check again about every second until the check passes; fail the match past the cap."""
        loop = asyncio.get_running_loop()
        deadline = started + self.limits.outage_wait_s - self.outage_s
        try:
            while (left := deadline - loop.time()) > 0:
                await asyncio.sleep(min(CHECK_EVERY_S, left))
                if await check():
                    return
        finally:
            self.outage_s += loop.time() - started
        raise ArenaNetworkError(
            f"match {self.match_id}: the platform's network check failed for "
            f"{self.outage_s:.1f} s in all, past the {self.limits.outage_wait_s:g} s a match may "
            "wait; the worker's network is down"
        )

    async def _send_results(self) -> None:
        """Tell every seat still in how the match ended; answers and faults are ignored."""
        game = self.game
        disqualified = [s.disqualified for s in self.stats]

        async def tell(seat: int) -> None:
            message = result_message(
                match_id=self.match_id,
                seat=seat,
                totals=game.totals,
                ranks=game.ranks(),
                disqualified=disqualified,
                faults=self.stats[seat].fault_count,
                timing=self.banks[seat].summary(),
            )
            with contextlib.suppress(BotFault):
                await self.seats[seat].call(message, self.limits.time_limit_ms)

        await asyncio.gather(*(tell(s) for s in range(game.players) if not disqualified[s]))

    def _outcome(self, duration_s: float) -> MatchOutcome:
        game = self.game
        ranks = game.ranks()
        r_ranks = rating_ranks(game.totals, [s.disqualified for s in self.stats])
        exact = game.exact_bids()
        seats = [
            SeatOutcome(
                seat=s,
                label=self.seats[s].label,
                score=game.totals[s],
                rank=ranks[s],
                rating_rank=r_ranks[s],
                exact_bids=exact[s],
                deals=len(game.deals),
                stats=self.stats[s],
                bank=self.banks[s],
            )
            for s in range(game.players)
        ]
        return MatchOutcome(
            match_id=self.match_id,
            seats=seats,
            replay={**game.replay(), "decisions": self.decisions},
            duration_s=duration_s,
        )


async def play_match(
    *,
    variant: Variant,
    seed: int,
    seats: Sequence[Seat],
    limits: Limits,
    match_id: str,
    network_check: NetworkCheck | None = None,
) -> MatchOutcome:
    """Play a match between ``seats`` and return its outcome.

    ``network_check`` is the platform's check of its own network; without it every timeout and
    connection error is charged to the bot.
    """
    runner = MatchRunner(
        variant=variant,
        seed=seed,
        seats=seats,
        limits=limits,
        match_id=match_id,
        network_check=network_check,
    )
    return await runner.run()
