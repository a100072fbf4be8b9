"""Hard deadlines for calls in flight, kept by one timer per event loop instead of one per call.

``asyncio.timeout`` schedules a timer handle when a call starts and cancels it when the call
ends: about 10 us a call on the development machine, and almost every call to a bot ends long
before its deadline. ``Deadlines`` keeps the calls in flight in one queue per duration: calls
of equal duration that start later end later, so each queue is in deadline order and its head
is the next to expire. A single timer is armed for the earliest head; when it fires, it cuts
the calls whose deadline has passed and re-arms for the next head. Starting and ending a call
is a few list operations.

A cut works as in ``asyncio.timeout``: the task is cancelled, and the ``with`` block turns that
cancellation into ``TimeoutError``; a cancellation from anyone else still propagates.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from types import TracebackType

# The event loop runs a timer up to one clock tick early; a deadline that close has passed.
_TICK = time.get_clock_info("monotonic").resolution


class Deadline:
    """One call's deadline: a context manager around the whole exchange."""

    __slots__ = ("_cancelling", "_queue", "_task", "done", "expired", "when")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, queue: deque[Deadline], when: float
    ) -> None:
        # Given the loop, current_task skips get_running_loop and its getpid system call.
        task = asyncio.current_task(loop)
        if task is None:
            raise RuntimeError("a deadline needs a running task")
        self._queue = queue
        self._task = task
        # Cancellations already pending on the task are not ours to swallow.
        self._cancelling = task.cancelling()
        self.when = when
        self.done = False
        self.expired = False

    def __enter__(self) -> Deadline:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.done = True
        queue = self._queue
        # Calls mostly end in the order they started: drop ended calls from the queue's head.
        while queue and queue[0].done:
            queue.popleft()
        if self.expired:
            # Take back the cancellation this deadline made, whether or not it arrived.
            ours = self._task.uncancel() <= self._cancelling
            if ours and exc_type is asyncio.CancelledError:
                raise TimeoutError from exc

    def expire(self) -> None:
        """Cut the call: cancel its task (at most once)."""
        if not self.done and not self.expired:
            self.expired = True
            self._task.cancel()


class Deadlines:
    """The deadlines of every call in flight on one event loop, kept by one timer."""

    __slots__ = ("_armed_at", "_loop", "_queues", "_timer")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queues: dict[float, deque[Deadline]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._armed_at = 0.0

    def cut_after(self, seconds: float) -> Deadline:
        """Return a context manager that cuts its block after ``seconds`` with TimeoutError."""
        queue = self._queues.get(seconds)
        if queue is None:
            queue = self._queues[seconds] = deque()
        loop = self._loop
        deadline = Deadline(loop, queue, loop.time() + seconds)
        queue.append(deadline)
        if self._timer is None or deadline.when < self._armed_at:
            self._arm(deadline.when)
        return deadline

    def close(self) -> None:
        """Stop the timer; calls still in flight are no longer cut."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._queues.clear()

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._armed_at = when
        self._timer = self._loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self._timer = None
        now = self._loop.time() + _TICK
        earliest: float | None = None
        for seconds, queue in list(self._queues.items()):
            while queue and (queue[0].done or queue[0].when <= now):
                queue.popleft().expire()
            if not queue:
                # Durations come and go (hello, tournaments' time controls): forget idle ones.
                del self._queues[seconds]
            elif earliest is None or queue[0].when < earliest:
                earliest = queue[0].when
        if earliest is not None:
            self._arm(earliest)
