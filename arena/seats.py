"""Seats the match runner can call: an HTTP bot, or an in-process reference player."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from arena.protocol import MessageType
from arena.transport import BotClient, CallResult


@dataclass
class HttpSeat:
    """A registered bot, called over HTTP through the shared keep-alive client."""

    client: BotClient
    endpoint: str
    secret: str
    label: str = "bot"

    async def call(self, message: dict[str, Any], time_limit_ms: int) -> CallResult:
        """Send ``message`` to the bot; faults come up as BotFault."""
        return await self.client.call(
            self.endpoint, self.secret, message, time_limit_ms=time_limit_ms
        )


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
