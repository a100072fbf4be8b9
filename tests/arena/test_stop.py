"""Stopping a run on the worker loop (``StopSignal``): the coroutine is cut where it waits, no bot
is called again, and a call cut half way leaves no half-read connection in the pool."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from enum import StrEnum
from typing import Any

import pytest

from arena.faults import BotFault
from arena.limits import Limits
from arena.match import play_match
from arena.netpolicy import NetworkPolicy
from arena.runtime import RunStopped, StopSignal, WorkerLoop
from arena.seats import HttpSeat
from engine.presets import preset
from tests.support.hostile_bots import http_response, polite_answer, read_request
from tests.support.loops import LoopServers

LOOPBACK = NetworkPolicy(allow_loopback=True)
# Long enough that no call is cut by its time limit while a test stops it.
LIMITS = Limits(time_limit_ms=30_000, grace_ms=100)
PLAY = {
    "protocol": "ohhell/1",
    "type": "play",
    "hand": ["TD", "AS", "3H"],
    "legal": ["TD", "AS"],
    "time_limit_ms": 30_000,
}
# Generous bounds for events on a loaded machine; nothing waits this long when it works.
WAIT_S = 30


class Hold(StrEnum):
    """Where the bot stops answering the request it holds."""

    BEFORE_HEADERS = "before_headers"
    MID_BODY = "mid_body"


class HoldingBot(LoopServers):
    """A bot on loopback that answers politely, except the ``hold_at``-th request (from 1; 0 for
    none), which it holds where ``hold`` says until the client closes that connection.

    ``held`` is set when it starts holding, ``closed`` when the client has closed the held
    connection; ``connections`` counts the connections it accepted.
    """

    wait_s = WAIT_S

    def __init__(self, hold_at: int, hold: Hold) -> None:
        super().__init__()
        self.hold_at = hold_at
        self.hold = hold
        self.requests = 0
        self.connections = 0
        self.held = threading.Event()
        self.closed = threading.Event()
        self.url = ""
        self._server: asyncio.Server | None = None

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/bot"

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while (request := await read_request(reader)) is not None:
                self.requests += 1
                answer = http_response(json.dumps(polite_answer(json.loads(request.body))).encode())
                if self.requests != self.hold_at:
                    writer.write(answer)
                    await writer.drain()
                    continue
                if self.hold is Hold.MID_BODY:
                    writer.write(answer[:-3])
                    await writer.drain()
                self.held.set()
                # Until the client closes the connection: with a FIN, or with a reset when it
                # closes before reading all that arrived (a loaded machine's loop may be late).
                with contextlib.suppress(ConnectionError):
                    while await reader.read(1024):
                        pass
                self.closed.set()
                return
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


@pytest.fixture
def worker_loop() -> Iterator[WorkerLoop]:
    """A worker loop of the test's own, closed afterwards."""
    loop = WorkerLoop()
    yield loop
    loop.close()


def _run_in_thread(loop: WorkerLoop, coro: Any, stop: StopSignal) -> tuple[threading.Thread, list]:
    """Run ``coro`` on ``loop`` from a thread of its own; the list gets its result or error."""
    ended: list = []

    def run() -> None:
        try:
            ended.append(loop.run(coro, stop=stop))
        except BaseException as exc:
            ended.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, ended


def _stop_and_unwind(stop: StopSignal, thread: threading.Thread, ended: list) -> None:
    """Set ``stop``; the run unwinds and ends in ``RunStopped``, which is no bot's fault."""
    stop.set()

    thread.join(WAIT_S)
    assert not thread.is_alive()
    (error,) = ended
    assert isinstance(error, RunStopped) and not isinstance(error, BotFault)


@pytest.mark.parametrize("hold", list(Hold))
def test_a_call_cut_half_way_closes_its_connection_and_the_next_call_gets_a_fresh_one(
    worker_loop: WorkerLoop, hold: Hold
) -> None:
    client = worker_loop.client(limits=LIMITS, policy=LOOPBACK)
    stop = StopSignal()
    with HoldingBot(hold_at=2, hold=hold) as bot:
        assert worker_loop.run(client.call(bot.url, "s", PLAY)).data == {"card": "TD"}
        thread, ended = _run_in_thread(worker_loop, client.call(bot.url, "s", PLAY), stop)
        assert bot.held.wait(WAIT_S)

        _stop_and_unwind(stop, thread, ended)
        assert bot.closed.wait(WAIT_S), "the cut connection was kept"
        assert worker_loop.run(client.call(bot.url, "s", PLAY)).data == {"card": "TD"}
        assert bot.connections == 2


@pytest.mark.parametrize(
    "options", [{"bidding": "open"}, {"bidding": "closed", "hook": False}], ids=["open", "closed"]
)
def test_a_match_stopped_mid_game_calls_no_bot_again_and_charges_no_fault(
    worker_loop: WorkerLoop, options: dict[str, Any]
) -> None:
    client = worker_loop.client(limits=LIMITS, policy=LOOPBACK)
    stop = StopSignal()
    with HoldingBot(hold_at=6, hold=Hold.BEFORE_HEADERS) as bot:
        seats = [HttpSeat(client, bot.url, "s", label=f"seat {i}") for i in range(4)]
        match = play_match(
            variant=preset("oh-hell", **options),
            seed=3,
            seats=seats,
            limits=LIMITS,
            match_id="cut",
        )
        thread, ended = _run_in_thread(worker_loop, match, stop)
        assert bot.held.wait(WAIT_S)

        _stop_and_unwind(stop, thread, ended)
        asked = bot.requests
        # The run has unwound: every call of the match has ended, so none can come later.
        assert bot.closed.wait(WAIT_S)
        assert bot.requests == asked == 6


def test_a_signal_set_before_the_run_stops_it_before_any_call_and_after_it_changes_nothing(
    worker_loop: WorkerLoop,
) -> None:
    client = worker_loop.client(limits=LIMITS, policy=LOOPBACK)
    with HoldingBot(hold_at=0, hold=Hold.BEFORE_HEADERS) as bot:
        finished = StopSignal()
        assert worker_loop.run(client.call(bot.url, "s", PLAY), stop=finished).status == 200
        finished.set()
        finished.set()

        stopped = StopSignal()
        stopped.set()
        with pytest.raises(RunStopped):
            worker_loop.run(client.call(bot.url, "s", PLAY), stop=stopped)

        assert bot.requests == 1
        assert worker_loop.run(client.call(bot.url, "s", PLAY)).data == {"card": "TD"}


def test_a_client_of_a_stopped_run_serves_other_runs_on_the_loop(
    worker_loop: WorkerLoop,
) -> None:
    client = worker_loop.client(limits=LIMITS, policy=LOOPBACK)
    with HoldingBot(hold_at=1, hold=Hold.BEFORE_HEADERS) as bot:
        stop = StopSignal()
        thread, ended = _run_in_thread(worker_loop, client.call(bot.url, "s", PLAY), stop)
        assert bot.held.wait(WAIT_S)
        # Another run on the same loop and pool goes on while one is held, and after it stops.
        assert worker_loop.run(client.call(bot.url, "s", PLAY)).data == {"card": "TD"}
        stop.set()
        thread.join(WAIT_S)
        assert isinstance(ended[0], RunStopped)
        assert worker_loop.run(client.call(bot.url, "s", PLAY)).data == {"card": "TD"}
