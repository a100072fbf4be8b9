"""Check a bot endpoint the way the arena will call it, and give a verdict with reasons.

For bot authors before registering: ``hello``, then a sample of real ``bid`` and ``play``
requests drawn from games of several variants (closed bidding, must-trump, the dealer's turned
card, eight players...), each answer parsed as strictly as in a match; then the signing probes
(``arena.probes``): unsigned, forged, replayed and stale requests, each of which it must refuse.
The samples share one time bank, charged as a match charges a seat's (``arena.timebank``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.faults import BotFault
from arena.limits import Limits
from arena.netpolicy import NetworkPolicy
from arena.probes import ProbeResult, probe_signing
from arena.protocol import MessageType, decision_message, parse_bid, parse_card
from arena.timebank import DEFAULT_TIME_BANK_MS, TimeBank
from arena.transport import BotClient
from engine.game import Game
from engine.presets import preset

# Variants and player counts that exercise every part of the request a bot must read.
SAMPLE_TABLES = (
    ("oh-hell", 4),
    ("la-podrida", 5),
    ("oh-well", 4),
    ("british-oh-hell", 3, {"bidding": "closed"}),
    ("up-and-down-the-river", 8),
    ("ascending-blackout", 6),
    ("nomination-whist", 7),
)


@dataclass
class CheckReport:
    """The outcome of checking one endpoint."""

    endpoint: str
    hello_ok: bool = False
    hello_answer: dict[str, Any] | None = None
    samples: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    time_limit_ms: int = 1000
    probes: tuple[ProbeResult, ...] = ()
    # The samples' time bank, with every sample's latency, answered legally or not.
    bank: TimeBank = field(default_factory=lambda: TimeBank(DEFAULT_TIME_BANK_MS))

    @property
    def passed(self) -> bool:
        """A bot passes when it answered hello and every sample legally and in time, and
        refused every signing probe."""
        return (
            self.hello_ok
            and not self.faults
            and len(self.latencies_ms) == self.samples
            and bool(self.probes)
            and not any(probe.accepted for probe in self.probes)
        )

    def percentile(self, q: float) -> float | None:
        """Latency percentile of the answered samples, in ms."""
        if not self.latencies_ms:
            return None
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def reasons(self) -> list[str]:
        """Why the verdict is what it is, in plain words."""
        reasons = [] if self.hello_ok else ["hello was not answered with a 2xx JSON object"]
        reasons += [f"signing probe {p.describe()}" for p in self.probes if p.accepted]
        reasons += self.faults[:10]
        if len(self.faults) > 10:
            reasons.append(f"... and {len(self.faults) - 10} more faults")
        p95 = self.percentile(0.95)
        if p95 is not None and p95 > self.time_limit_ms / 2:
            reasons.append(
                f"p95 latency {p95:.1f} ms is over half the {self.time_limit_ms} ms limit"
            )
        if self.bank.over_limit:
            reasons.append(
                f"{self.bank.over_limit} answers took longer than their time limit and drew "
                f"{self.bank.used_ms} ms of the {self.bank.start_ms} ms time bank"
            )
        return reasons


def sample_requests(
    count: int, seed: int, time_limit_ms: int, time_bank_ms: int = DEFAULT_TIME_BANK_MS
) -> list[dict[str, Any]]:
    """Draw ``count`` real bid and play requests from random games of the sample variants,
    each telling the bank ``time_bank_ms`` (a checker sets the bank left as it calls)."""
    rng = random.Random(seed)
    requests: list[dict[str, Any]] = []
    while len(requests) < count:
        name, players, *extra = SAMPLE_TABLES[len(requests) % len(SAMPLE_TABLES)]
        variant = preset(name, **(extra[0] if extra else {}))
        game = Game(variant, players, rng.getrandbits(32))
        stop = rng.randrange(1, 200)
        for _ in range(stop):
            if game.is_over:
                break
            actions: Sequence[int | str] = game.legal_actions()
            game.apply(rng.choice(actions))
        if game.is_over:
            continue
        kind = MessageType(game.phase)
        limit = time_limit_ms * (2 if kind is MessageType.BID else 1)
        requests.append(
            decision_message(
                kind,
                game.observation(game.acting_seat),
                game.legal_actions(),
                match_id=f"check-{len(requests)}",
                time_limit_ms=limit,
                time_bank_ms=time_bank_ms,
            )
        )
    return requests


async def check_bot(
    endpoint: str,
    secret: str,
    *,
    samples: int = 28,
    seed: int = 0,
    time_limit_ms: int = 1000,
    time_bank_ms: int = DEFAULT_TIME_BANK_MS,
    policy: NetworkPolicy | None = None,
) -> CheckReport:
    """Call ``endpoint`` with hello and sample requests; return the report."""
    limits = Limits(time_limit_ms=time_limit_ms)
    bank = TimeBank(time_bank_ms)
    report = CheckReport(endpoint=endpoint, samples=samples, time_limit_ms=time_limit_ms, bank=bank)
    async with BotClient(limits=limits, policy=policy or NetworkPolicy()) as client:
        try:
            hello = await client.hello(endpoint, secret)
            report.hello_ok, report.hello_answer = True, hello.data
        except BotFault as fault:
            report.faults.append(f"hello: {fault.kind}: {fault.detail}")
            return report
        report.probes = await probe_signing(client, endpoint, secret)
        for i, message in enumerate(sample_requests(samples, seed, time_limit_ms, time_bank_ms)):
            limit = message["time_limit_ms"]
            message["time_bank_ms"] = bank.left_ms
            latency_ms: float | None = None
            try:
                result = await client.call(
                    endpoint, secret, message, time_limit_ms=bank.allowed_ms(limit)
                )
                latency_ms = result.latency_ms
                bank.charge(limit, latency_ms)
                if message["type"] is MessageType.BID:
                    parse_bid(result.data, message["legal"])
                else:
                    parse_card(result.data, message["legal"])
                report.latencies_ms.append(result.latency_ms)
            except BotFault as fault:
                if latency_ms is None and fault.latency_ms is not None:
                    bank.charge(limit, fault.latency_ms)
                where = f"sample {i + 1} ({message['type']}, {message['variant']['name']})"
                report.faults.append(f"{where}: {fault.kind}: {fault.detail}")
    return report
