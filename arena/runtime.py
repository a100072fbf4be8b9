"""Running the arena's coroutines from synchronous code: one event loop per worker process.

``WorkerLoop`` keeps an event loop on a thread of its own, with one ``BotClient``
(``arena.transport``) per limits and network policy; a web request hands it a coroutine (a
single call) and waits for the result (``run``), a match host hands it many matches and waits
for none (``submit``), and a ``StopSignal`` set from any thread stops such a run where it waits.
``worker_loop()`` is the process's own loop.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from arena.limits import Limits
from arena.netpolicy import DEFAULT_POLICY, NetworkPolicy
from arena.probes import Verification, verify_bot
from arena.transport import BotClient, CallResult

T = TypeVar("T")


class RunStopped(Exception):
    """``WorkerLoop.run`` was stopped by its ``StopSignal``: asked for, neither a bot's fault
    nor the platform's failure."""


class StopSignal:
    """Set from any thread to stop what ``WorkerLoop.run`` runs with it; set once for good."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._listeners: list[Callable[[], object]] = []

    def set(self) -> None:
        """Stop every run waiting on this signal, now and later; setting it again does nothing."""
        with self._lock:
            if self._set:
                return
            self._set = True
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    def is_set(self) -> bool:
        """Whether the signal has been set."""
        return self._set

    async def _guard(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` in this task, cancelled where it waits once set; then ``RunStopped``."""
        task = asyncio.current_task()
        if task is None:  # run_coroutine_threadsafe always runs a coroutine as a task
            coro.close()
            raise RuntimeError("a stoppable run needs a task")
        loop = asyncio.get_running_loop()

        def cancel() -> None:
            loop.call_soon_threadsafe(task.cancel)

        with self._lock:
            stopped = self._set
            if not stopped:
                self._listeners.append(cancel)
        if stopped:
            coro.close()
            raise RunStopped("stopped by its StopSignal before it began")
        try:
            return await coro
        except asyncio.CancelledError:
            if self.is_set():
                raise RunStopped("stopped by its StopSignal") from None
            raise
        finally:
            with self._lock:
                if cancel in self._listeners:
                    self._listeners.remove(cancel)


class WorkerLoop:
    """One event loop on a thread of its own, and one ``BotClient`` per limits and policy.

    Synchronous code (a Celery task, a web request verifying a bot) hands a coroutine to
    ``run`` and waits for it; coroutines from any number of threads run at once on the one
    loop and share its keep-alive pools, so a worker process serving many matches keeps one
    loop and one pool however many matches it has in flight.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._clients: dict[tuple[Limits, NetworkPolicy], BotClient] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="arena-worker-loop", daemon=True
        )
        self._thread.start()

    def client(self, *, limits: Limits, policy: NetworkPolicy) -> BotClient:
        """Return this loop's client for ``limits`` and ``policy``, made on first use.

        Only the client's own limits (grace, answer cap, connection pool) come from ``limits``;
        callers pass each call's time limit.
        """
        with self._lock:
            client = self._clients.get((limits, policy))
            if client is None:
                client = self._clients[limits, policy] = BotClient(limits=limits, policy=policy)
            return client

    def submit(
        self, coro: Coroutine[Any, Any, T], *, stop: StopSignal | None = None
    ) -> concurrent.futures.Future[T]:
        """Start ``coro`` on the loop and return its future at once, without waiting for it.

        Once ``stop`` is set (from any thread), ``coro`` is cancelled where it waits and the
        future raises ``RunStopped`` after it has unwound: a call to a bot cut this way has
        closed its connection, never handed it back to the pool half read (``BotClient.call``).
        """
        if stop is not None:
            coro = stop._guard(coro)
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], *, stop: StopSignal | None = None) -> T:
        """Run ``coro`` on the loop and return its result (``submit``, then wait); cancel it if
        the wait is broken."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("WorkerLoop.run waits for the loop: await the coroutine instead")
        future = self.submit(coro, stop=stop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def close(self) -> None:
        """Close every client and stop the loop."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            asyncio.run_coroutine_threadsafe(client.close(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


_worker_loop: WorkerLoop | None = None
_worker_loop_lock = threading.Lock()


def worker_loop() -> WorkerLoop:
    """Return this process's ``WorkerLoop``, started on first use (and anew in a forked child)."""
    global _worker_loop
    with _worker_loop_lock:
        if _worker_loop is None:
            _worker_loop = WorkerLoop()
        return _worker_loop


def _forget_worker_loop() -> None:
    # A forked child has the parent's loop object but not its thread: it starts its own.
    global _worker_loop, _worker_loop_lock
    _worker_loop = None
    _worker_loop_lock = threading.Lock()


def _close_worker_loop() -> None:
    if _worker_loop is not None:
        _worker_loop.close()


os.register_at_fork(after_in_child=_forget_worker_loop)
atexit.register(_close_worker_loop)


def call_once(
    endpoint: str,
    secret: str,
    message: Mapping[str, Any],
    *,
    time_limit_ms: int | None = None,
    limits: Limits | None = None,
    policy: NetworkPolicy = DEFAULT_POLICY,
) -> CallResult:
    """Make one call from synchronous code (e.g. verifying a bot) on the worker loop."""
    loop = worker_loop()
    client = loop.client(limits=limits or Limits(), policy=policy)
    return loop.run(client.call(endpoint, secret, message, time_limit_ms=time_limit_ms))


def hello_once(
    endpoint: str,
    secret: str,
    *,
    limits: Limits | None = None,
    policy: NetworkPolicy = DEFAULT_POLICY,
) -> CallResult:
    """Send one ``hello`` from synchronous code, on the worker loop."""
    loop = worker_loop()
    client = loop.client(limits=limits or Limits(), policy=policy)
    return loop.run(client.hello(endpoint, secret))


def verify_once(
    endpoint: str,
    secret: str,
    *,
    limits: Limits | None = None,
    policy: NetworkPolicy = DEFAULT_POLICY,
) -> Verification:
    """Send a ``hello`` and the signing probes from synchronous code, on the worker loop."""
    loop = worker_loop()
    client = loop.client(limits=limits or Limits(), policy=policy)
    return loop.run(verify_bot(client, endpoint, secret))
