"""Servers on an asyncio event loop of their own, in a daemon thread, so that a test's blocking
code (the arena's synchronous entry points, a Django test client) can call them on loopback."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, Self, TypeVar

T = TypeVar("T")


class LoopServers:
    """A context manager that runs ``_start`` on a background loop when entered and ``_stop``
    when left, then stops the loop and closes it; subclasses open and close their servers."""

    # How long starting, stopping and each call on the loop may take.
    wait_s: float = 10.0

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        self.on_loop(self._start())
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.on_loop(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(self.wait_s)
        self._loop.close()

    def on_loop(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the background loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(self.wait_s)

    async def _start(self) -> None:
        raise NotImplementedError

    async def _stop(self) -> None:
        raise NotImplementedError
