"""Explicit limits on every call to a bot, in one frozen value."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from arena.protocol import MessageType


@dataclass(frozen=True, slots=True)
class Limits:
    """How long, how big and how often a bot may misbehave before the arena stops waiting.

    The time limit covers the whole exchange: connecting, sending, the status line, the headers
    and the body. A call is cut at ``time_limit + grace_ms``: the grace absorbs network transit
    and scheduling jitter, so a bot answering just in time is not faulted for our latency. In a
    match each seat also has a time bank of ``time_bank_ms`` that its decisions over the limit
    draw on (``arena.timebank``); a decision is then cut at the limit plus the bank left plus
    the grace.
    """

    # Time a bot may take for a play; tournaments set their own via ``with_time_limit``.
    time_limit_ms: int = 1000
    # Each seat's time bank for a whole match, in ms (0: none); competitions set their own via
    # ``with_time_bank``.
    time_bank_ms: int = 0
    # Bids get this many times a play's time (docs/rules.md 3.9).
    bid_time_factor: int = 2
    # Fixed slack after the time limit before the call is cut; the same for every bot.
    grace_ms: int = 100
    # Time allowed for the ``hello`` check at registration and in health checks.
    hello_time_limit_ms: int = 3000
    # Connecting alone may not use more than this, even when the time limit is longer.
    connect_timeout_ms: int = 3000
    # Answers are tiny JSON objects; anything past this is a fault, not a memory problem.
    max_response_bytes: int = 64 * 1024
    # Faults in one match after which the bot is no longer called in it and ranks last.
    max_faults_per_match: int = 5
    # Connections the worker holds open at once, across all bots; waiting for one of these
    # slots is the platform's time, not the bot's.
    max_connections: int = 512
    # Idle keep-alive connections are closed after this many seconds.
    keepalive_timeout_s: float = 30.0
    # How long a match may wait in all, over every outage of the platform's own network (see
    # ``netcheck.py``), before it fails on the platform's side (and is played again later).
    outage_wait_s: float = 60.0
    # A match's total duration: once it is passed, a seat that has used at least its share of
    # the match's time so far (the time over the seats) is no longer called and plays the
    # fallback with a ``match_time`` fault; the others go on. None: no cap.
    max_match_s: float | None = None

    def __post_init__(self) -> None:
        for name in (
            "time_limit_ms",
            "bid_time_factor",
            "hello_time_limit_ms",
            "connect_timeout_ms",
            "max_response_bytes",
            "max_faults_per_match",
            "max_connections",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be at least 1, not {getattr(self, name)!r}")
        for name in ("grace_ms", "time_bank_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"Limits.{name} must not be negative, not {getattr(self, name)!r}")
        if self.max_match_s is not None and not 0 < self.max_match_s < math.inf:
            raise ValueError(
                f"Limits.max_match_s must be a positive number of seconds, not {self.max_match_s!r}"
            )
        if self.keepalive_timeout_s <= 0:
            raise ValueError("Limits.keepalive_timeout_s must be positive")
        if not 0 <= self.outage_wait_s < math.inf:
            raise ValueError(
                "Limits.outage_wait_s must be a finite, non-negative number of seconds, "
                f"not {self.outage_wait_s!r}"
            )

    def time_limit_for(self, message_type: str) -> int:
        """Return the time limit in ms the bot is told for a message of this type."""
        if message_type == MessageType.BID:
            return self.time_limit_ms * self.bid_time_factor
        if message_type == MessageType.HELLO:
            return self.hello_time_limit_ms
        return self.time_limit_ms

    def deadline_s(self, time_limit_ms: int) -> float:
        """Return the hard cut, in seconds, for a call told ``time_limit_ms``."""
        return (time_limit_ms + self.grace_ms) / 1000

    def with_time_limit(self, time_limit_ms: int) -> Limits:
        """Return these limits with a tournament's per-play time control."""
        return replace(self, time_limit_ms=time_limit_ms)

    def with_time_bank(self, time_bank_ms: int) -> Limits:
        """Return these limits with a competition's per-match time bank."""
        return replace(self, time_bank_ms=time_bank_ms)
