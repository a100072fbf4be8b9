"""Seats the match runner can call: an HTTP bot, or an in-process reference player."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from yarl import URL

from arena.protocol import MessageType
from arena.transport import BotClient, CallResult


@dataclass
class HttpSeat:
    """A registered bot, called over HTTP through the shared keep-alive client."""

    client: BotClient
    endpoint: str
    secret: str
    label: str = "bot"
    # The endpoint's host without the port: seats on other hosts vouch for the worker's network.
    host: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.host = endpoint_host(self.endpoint)

    async def call(self, message: dict[str, Any], time_limit_ms: int) -> CallResult:
        """Send ``message`` to the bot; faults come up as BotFault."""
        return await self.client.call(
            self.endpoint, self.secret, message, time_limit_ms=time_limit_ms
        )

    async def probe(self, time_limit_ms: int) -> CallResult:
        """Send the bot a signed ``hello``; faults come up as BotFault."""
        return await self.client.hello(self.endpoint, self.secret, time_limit_ms=time_limit_ms)


def endpoint_host(endpoint: str) -> str | None:
    """Return the host of an endpoint URL, or None when it has none."""
    try:
        return URL(endpoint).host
    except (TypeError, ValueError):
        return None


@dataclass
class LocalSeat:
    """A reference player from ``engine.players`` answering in-process (no network)."""

    player: Any
    label: str = "local"

    async def call(self, message: dict[str, Any], time_limit_ms: int) -> CallResult:
        """Answer like a well-behaved bot would."""
        started = time.perf_counter()
        kind = message["type"]
        if kind == MessageType.BID:
            answer: dict[str, Any] = {"bid": self.player.bid(message, tuple(message["legal"]))}
        elif kind == MessageType.PLAY:
            answer = {"card": self.player.play(message, tuple(message["legal"]))}
        else:
            answer = {}
        return CallResult(answer, (time.perf_counter() - started) * 1000)
