"""The worker loop: synchronous code runs calls and whole matches on one loop and one pool."""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from aiohttp import web

from arena.limits import Limits
from arena.match import MatchOutcome, Seat, play_match
from arena.netpolicy import NetworkPolicy
from arena.runtime import call_once, hello_once, worker_loop
from arena.seats import HttpSeat, LocalSeat
from engine.players import make_player
from engine.presets import preset
from tests.support.hostile_bots import HostileBots
from tests.support.loops import LoopServers

LOOPBACK = NetworkPolicy(allow_loopback=True)
LIMITS = Limits(time_limit_ms=150, grace_ms=100, max_response_bytes=64 * 1024)
PLAY = {
    "protocol": "ohhell/1",
    "type": "play",
    "hand": ["TD", "AS", "3H"],
    "legal": ["TD", "AS"],
    "time_limit_ms": 150,
}


def test_call_once_and_hello_once_work_from_synchronous_code(hostile_bots: HostileBots) -> None:
    result = call_once(hostile_bots["fast"], "s", PLAY, limits=LIMITS, policy=LOOPBACK)
    hello = hello_once(hostile_bots["fast"], "s", limits=LIMITS, policy=LOOPBACK)

    assert result.data == {"card": "TD"}
    assert hello.data["ok"] is True


class GateBot(LoopServers):
    """A bot that holds every answer until ``wanted`` requests are in flight at once.

    Only calls made concurrently can open the gate, so it shows concurrency by an event rather
    than by timing; past ``give_up_s`` it answers anyway and the test sees the shortfall.
    """

    wait_s = 30.0

    def __init__(self, wanted: int, give_up_s: float = 20.0) -> None:
        super().__init__()
        self.wanted = wanted
        self.give_up_s = give_up_s
        self.in_flight = 0
        self.most_in_flight = 0
        self.peers: set[tuple[str, int]] = set()
        self.url = ""
        self._opened: asyncio.Event | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        assert self._opened is not None
        message = await request.json()
        self.peers.add(request.transport.get_extra_info("peername")[:2])  # type: ignore[union-attr]
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        if self.in_flight >= self.wanted:
            self._opened.set()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._opened.wait(), self.give_up_s)
        finally:
            self.in_flight -= 1
        legal = message.get("legal") or [None]
        key = {"bid": "bid", "play": "card"}.get(message["type"], "ok")
        return web.json_response({key: legal[0]})

    async def _start(self) -> None:
        self._opened = asyncio.Event()
        app = web.Application()
        app.router.add_post("/", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/"

    async def _stop(self) -> None:
        await self._runner.cleanup()


def test_matches_from_many_threads_run_at_once_on_one_loop_and_one_pool() -> None:
    matches = 4
    limits = Limits(time_limit_ms=30_000, grace_ms=100)
    loop = worker_loop()
    client = loop.client(limits=limits, policy=LOOPBACK)
    variant = preset("oh-hell", max_cards=1, order="down")

    with GateBot(wanted=matches) as bot:

        def play(seed: int) -> MatchOutcome:
            seats: list[Seat] = [HttpSeat(client, bot.url, "s", label="gate")]
            seats += [LocalSeat(make_player("random", seed + i)) for i in range(3)]
            return loop.run(
                play_match(
                    variant=variant, seed=seed, seats=seats, limits=limits, match_id=str(seed)
                )
            )

        with ThreadPoolExecutor(matches) as pool:
            outcomes = list(pool.map(play, range(matches)))
        connections = len(bot.peers)
        # A later match from another thread is served by the connections already open.
        outcomes.append(play(matches))

    assert all(o.replay["finished"] for o in outcomes)
    assert all(o.seats[0].stats.fault_count == 0 for o in outcomes)
    assert bot.most_in_flight == matches
    assert connections <= matches
    assert len(bot.peers) == connections
    assert worker_loop() is loop
    assert loop.client(limits=limits, policy=LOOPBACK) is client


def test_waiting_on_the_worker_loop_from_its_own_thread_is_refused_not_a_deadlock() -> None:
    loop = worker_loop()

    async def inner() -> int:
        return 1

    async def outer() -> str:
        with pytest.raises(RuntimeError):
            loop.run(inner())
        return "refused"

    assert loop.run(outer()) == "refused"
    assert loop.run(inner()) == 1
