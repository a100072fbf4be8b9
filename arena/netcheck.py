"""The platform's check of its own network, which the match runner asks before charging a fault.

A timeout or connection error is also what every call shows when the worker itself loses its
network. The check answers from infrastructure the platform runs (its broker, an endpoint it
controls on the bots' side of the network), never from a bot, so no bot can make it pass or fail.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

# True when the worker's network works; it must return within a bounded time.
NetworkCheck = Callable[[], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class TcpCheck:
    """Passes when every ``(host, port)`` target accepts a TCP connection within ``timeout_s``."""

    targets: tuple[tuple[str, int], ...]
    timeout_s: float

    def __post_init__(self) -> None:
        if not self.targets:
            raise ValueError("TcpCheck needs at least one (host, port) to connect to")
        if not self.timeout_s > 0:
            raise ValueError(f"TcpCheck.timeout_s must be positive, not {self.timeout_s!r}")

    async def __call__(self) -> bool:
        """Connect to every target at once; True only when all of them accept."""
        return all(await asyncio.gather(*(self._connects(*target) for target in self.targets)))

    async def _connects(self, host: str, port: int) -> bool:
        try:
            async with asyncio.timeout(self.timeout_s):
                _, writer = await asyncio.open_connection(host, port)
        except (OSError, TimeoutError):
            return False
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return True
