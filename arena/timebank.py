"""A seat's time bank: the time its decisions over the time limit draw on in one match.

How it is charged (docs/bot-protocol.md, "The time bank" under "Time limits"): a decision's
latency is the arena's own measure of the whole exchange, from just before the request is sent
to the last byte of the answer read. The call is cut at the time limit plus the bank left plus
the fixed grace. Whatever the answer was, the part of the latency over the time limit is
charged to the bank, rounded up to a whole millisecond and at most what is left; a call cut
at its deadline (a timeout) therefore empties the bank. A call lost to the platform's own
network is no decision and is not charged.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

# A competition's bank when its organiser sets none: ten seconds a seat per match.
DEFAULT_TIME_BANK_MS = 10_000
# The most a competition may give: a call can hold a worker for its time limit plus this.
MAX_TIME_BANK_MS = 120_000


@dataclass(slots=True)
class TimeBank:
    """One seat's bank over one match, and the latencies of the decisions it was asked."""

    start_ms: int
    left_ms: int = field(init=False)
    latencies_ms: list[float] = field(default_factory=list)
    # Decisions whose latency was over their time limit, drawing on the bank or not.
    over_limit: int = 0

    def __post_init__(self) -> None:
        if self.start_ms < 0:
            raise ValueError(f"a time bank must not be negative, not {self.start_ms!r}")
        self.left_ms = self.start_ms

    def allowed_ms(self, time_limit_ms: int) -> int:
        """The time a call may take before its grace: the time limit plus the bank left."""
        return time_limit_ms + self.left_ms

    def charge(self, time_limit_ms: int, latency_ms: float) -> int:
        """Record one decision's latency and draw its time over ``time_limit_ms``; return the
        milliseconds drawn."""
        self.latencies_ms.append(latency_ms)
        over = latency_ms - time_limit_ms
        if over <= 0:
            return 0
        self.over_limit += 1
        drawn = min(self.left_ms, math.ceil(over))
        self.left_ms -= drawn
        return drawn

    @property
    def used_ms(self) -> int:
        """The milliseconds drawn so far."""
        return self.start_ms - self.left_ms

    def summary(self) -> dict[str, Any]:
        """The seat's own timing in a match, as its ``result`` message and outcome carry it."""
        latencies = self.latencies_ms
        return {
            "decisions": len(latencies),
            "median_ms": round(statistics.median(latencies), 1) if latencies else None,
            "max_ms": round(max(latencies), 1) if latencies else None,
            "over_limit": self.over_limit,
            "time_bank_ms": self.start_ms,
            "time_bank_used_ms": self.used_ms,
            "time_bank_left_ms": self.left_ms,
        }
