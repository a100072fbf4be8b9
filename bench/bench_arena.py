"""Measure the arena side by side with what it is built on, in paired interleaved rounds.

Run: .venv/bin/python -m bench.bench_arena [--rounds 5] [--matches 2] [--quick] [--parts abcde]

Each figure is a ratio of two sides measured in the same run, the sides taking turns round by
round (which goes first alternates), so a noisy shared machine hits both alike; the report gives
the median of the per-round figures and their spread (lowest to highest).

(a) overhead per decision: whole matches between instant bots (legal[0]) through the arena
    (MatchRunner, HttpSeats, one BotClient) against the anchor: a bare aiohttp keep-alive
    session of its own posting the very same request bodies, already encoded, one after
    another, reading each answer and decoding it with orjson (the cheapest fair way to call a
    bot with aiohttp, so the most favourable to the anchor). Wall time is the headline; the
    CPU time of the calling process (user and system) is shown beside it, as it is less
    disturbed by other work on a shared machine.
(b) concurrency: bots that answer after 20 ms; matches per second of one worker process, one
    match at a time against 50 in flight, each match handed to the process's WorkerLoop from
    a thread of its own, as a Celery worker's threads do; peak RSS of that process.
(c) round trip on loopback to the example bot server, the starter bot and, for contrast, a
    plain stdlib server without TCP_NODELAY.
(d) memory: one worker process with 200 matches in flight at once (20 ms bots); its RSS at
    rest (loop and pool started, modules loaded) against its peak.
(k) as (a), with some of the arena's own steps per decision replaced by constants (the seat's
    observation, the request's signature, the deadline), one set at a time, each with its own
    in-run anchor: what each step costs of the ratio. A diagnosis: such an arena would be unfair
    (the same view for every seat), forgeable or unbounded.
(e) as (a), against a bot on the example server (arena/botserver.py: aiohttp, the random
    player), as a bot author would start one: the same arena work beside a bot that does more
    per request. (a), with the cheapest bot there is, stays the headline.

Bots always run in other processes; (b) and (d) run the worker in a fresh process of its own,
so its CPU time and memory are the arena's alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import queue
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from unittest import mock

import aiohttp
import orjson

from arena.limits import Limits
from arena.match import MatchRunner, play_match
from arena.netpolicy import NetworkPolicy
from arena.protocol import MessageType, decision_message
from arena.runtime import WorkerLoop, worker_loop
from arena.seats import HttpSeat
from arena.signing import sign_headers
from arena.timebank import DEFAULT_TIME_BANK_MS
from arena.transport import BotClient, CallResult, encode_message
from bench.support.processes import ROOT
from engine.game import Game, Phase
from engine.observation import observe
from engine.presets import preset

LOOPBACK = NetworkPolicy(allow_loopback=True)
SECRET = "bench-secret"
PLAYERS = 4
OVERHEAD_VARIANT = preset("oh-hell")  # down to one card and up again: long deals, many decisions
SHORT_VARIANT = preset("oh-hell", max_cards=3, order="down")  # deals of 3, 2, 1 cards


# -- bots in their own processes ----------------------------------------------------------------


def _answer(body: bytes) -> bytes:
    request = json.loads(body)
    kind = request.get("type")
    if kind == "bid":
        data: dict[str, Any] = {"bid": request["legal"][0]}
    elif kind == "play":
        data = {"card": request["legal"][0]}
    else:
        data = {"ok": True}
    payload = json.dumps(data).encode()
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
        + str(len(payload)).encode()
        + b"\r\n\r\n"
        + payload
    )


class _LegalFirstBot(asyncio.Protocol):
    """Answer legal[0] after ``delay_s`` over keep-alive, with TCP_NODELAY."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.buf = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)  # a TCP server's: it can write
        self.transport = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while (head_end := self.buf.find(b"\r\n\r\n")) >= 0:
            length = 0
            for line in self.buf[:head_end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            end = head_end + 4 + length
            if len(self.buf) < end:
                return
            response = _answer(self.buf[head_end + 4 : end])
            self.buf = self.buf[end:]
            if self.delay_s:
                asyncio.get_running_loop().call_later(self.delay_s, self._send, response)
            else:
                self.transport.write(response)

    def _send(self, response: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(response)


def _serve_legal_first(delay_s: float, ports: multiprocessing.Queue) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: _LegalFirstBot(delay_s), "127.0.0.1", 0, backlog=1024
        )
        ports.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


def _serve_example_bot(ports: multiprocessing.Queue) -> None:
    from aiohttp import web

    from arena.botserver import make_app

    async def main() -> None:
        runner = web.AppRunner(make_app("random"), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        ports.put(runner.addresses[0][1])
        await asyncio.Event().wait()

    asyncio.run(main())


def _serve_stdlib_without_nodelay(ports: multiprocessing.Queue) -> None:
    from http.server import ThreadingHTTPServer

    from examples import starter_bot

    class Handler(starter_bot.BotHandler):
        disable_nagle_algorithm = False  # the stdlib default

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ports.put(server.server_address[1])
    server.serve_forever()


class Bots:
    """Start bot servers in child processes; stop them all on exit."""

    def __init__(self) -> None:
        self.procs: list[multiprocessing.Process] = []
        self.popens: list[subprocess.Popen[str]] = []

    def __enter__(self) -> Bots:
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            proc.terminate()
            proc.join()
        for popen in self.popens:
            popen.terminate()
            popen.wait()

    def start(self, target: Callable[..., None], *args: Any) -> str:
        """Run ``target(*args, ports)`` in a child process and return its URL."""
        ports: multiprocessing.Queue = multiprocessing.Queue()
        proc = multiprocessing.Process(target=target, args=(*args, ports), daemon=True)
        proc.start()
        self.procs.append(proc)
        return f"http://127.0.0.1:{ports.get(timeout=20)}/"

    def start_starter_bot(self) -> str:
        """Run examples/starter_bot.py exactly as a bot author would; return its URL."""
        popen = subprocess.Popen(
            [sys.executable, str(ROOT / "examples" / "starter_bot.py"), "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.popens.append(popen)
        assert popen.stdout is not None
        line = popen.stdout.readline()
        return "http://" + line.split("http://", 1)[1].split()[0]


# -- paired rounds --------------------------------------------------------------------------


def spread(values: Sequence[float]) -> str:
    """The median of ``values`` and their range, e.g. ``1.12 (1.05-1.20)``."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


# -- (a) overhead per decision ------------------------------------------------------------------


def _seats(client: BotClient, url: str) -> list[HttpSeat]:
    return [HttpSeat(client, f"{url}seat{s}", SECRET, label=f"s{s}") for s in range(PLAYERS)]


async def _arena_round(client: BotClient, url: str, seeds: Sequence[int]) -> tuple[int, float]:
    decisions, wall = 0, time.perf_counter()
    for seed in seeds:
        outcome = await play_match(
            variant=OVERHEAD_VARIANT,
            seed=seed,
            seats=_seats(client, url),
            limits=client.limits,
            match_id=f"bench-{seed}",
        )
        decisions += sum(s.stats.calls for s in outcome.seats)
    return decisions, time.perf_counter() - wall


async def _raw_round(
    session: aiohttp.ClientSession, url: str, bodies: Sequence[bytes]
) -> tuple[int, float]:
    headers = {"Content-Type": "application/json"}
    wall = time.perf_counter()
    for body in bodies:
        async with session.post(url, data=body, headers=headers) as response:
            orjson.loads(await response.read())
    return len(bodies), time.perf_counter() - wall


async def _typical_round(
    session: aiohttp.ClientSession, url: str, messages: Sequence[dict[str, Any]]
) -> tuple[int, float]:
    wall = time.perf_counter()
    for message in messages:
        async with session.post(url, json=message) as response:
            await response.json()
    return len(messages), time.perf_counter() - wall


class _Recorder:
    """A seat that answers legal[0] in-process and keeps the bytes the arena would send."""

    label = "recorder"

    def __init__(self, bodies: list[bytes]) -> None:
        self.bodies = bodies

    async def call(self, message: dict[str, Any], time_limit_ms: int) -> CallResult:
        self.bodies.append(encode_message(message))
        kind = message["type"]
        if kind == "result":
            return CallResult({}, 0.0)
        return CallResult(
            {"bid": message["legal"][0]} if kind == "bid" else {"card": message["legal"][0]}, 0.0
        )


def _recorded_bodies(seeds: Sequence[int], limits: Limits) -> list[bytes]:
    bodies: list[bytes] = []
    for seed in seeds:
        runner = MatchRunner(
            variant=OVERHEAD_VARIANT,
            seed=seed,
            seats=[_Recorder(bodies) for _ in range(PLAYERS)],
            limits=limits,
            match_id=f"bench-{seed}",
        )
        asyncio.run(runner.run())
    # Only the decisions: result messages are the arena's own extra.
    return [b for b in bodies if b'"type":"result"' not in b]


def bench_overhead(url: str, rounds: int, matches: int) -> dict[str, Any]:
    """Per-decision wall microseconds of the arena and of both anchors, in paired rounds.

    ``raw``: pre-encoded bodies, answers read as bytes and decoded with orjson (the anchor at
    its fastest); ``typical``: ``session.post(url, json=message)`` and ``response.json()``, as
    aiohttp's documentation shows it. The three sides take turns, the order rotating by round.
    """
    # With a time bank, as every competition's match plays: its charging is part of the cost.
    limits = Limits(time_limit_ms=5000, time_bank_ms=DEFAULT_TIME_BANK_MS)
    seeds = list(range(matches))
    bodies = _recorded_bodies(seeds, limits)
    messages = [orjson.loads(body) for body in bodies]
    order = ("raw", "arena", "typical")

    async def main() -> list[dict[str, float]]:
        rows: list[dict[str, float]] = []
        async with (
            BotClient(limits=limits, policy=LOOPBACK) as client,
            aiohttp.ClientSession() as session,
        ):
            await _arena_round(client, url, seeds[:1])  # warm up every path
            await _raw_round(session, url, bodies[:200])
            await _typical_round(session, url, messages[:200])
            for r in range(rounds):
                row = {}
                for side in order[r % 3 :] + order[: r % 3]:
                    cpu = time.process_time()
                    if side == "raw":
                        n, wall = await _raw_round(session, url, bodies)
                    elif side == "typical":
                        n, wall = await _typical_round(session, url, messages)
                    else:
                        n, wall = await _arena_round(client, url, seeds)
                    row[side] = wall * 1e6 / n
                    row[f"{side}_cpu"] = (time.process_time() - cpu) * 1e6 / n
                rows.append(row)
        return rows

    rows = asyncio.run(main())
    return {
        "decisions": len(bodies),
        "body_bytes": statistics.mean(map(len, bodies)),
        **{f"{side}_us": [row[side] for row in rows] for side in order},
        **{f"{side}_cpu_us": [row[f"{side}_cpu"] for row in rows] for side in order},
        "ratio": [row["arena"] / row["raw"] for row in rows],
        "ratio_typical": [row["arena"] / row["typical"] for row in rows],
        "ratio_cpu": [row["arena_cpu"] / row["raw_cpu"] for row in rows],
    }


# -- (k) what the arena's own steps cost -----------------------------------------------------------

STEPS = ("observation", "signature", "deadline")


class _NoDeadline:
    """Stands in for the asyncio module in arena/transport.py, where each deadline is none."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    @staticmethod
    def timeout(delay: float | None) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()


def _mid_game_observation() -> dict[str, Any]:
    game = Game(OVERHEAD_VARIANT, PLAYERS, 1)
    for _ in range(200):
        if game.phase is Phase.BID:
            game.bid(game.legal_bids()[0])
        else:
            game.play(game.legal_cards()[0])
    return observe(game, game.acting_seat)


@contextlib.contextmanager
def _without(steps: Sequence[str]) -> Iterator[None]:
    """Replace the arena's named per-decision steps by constants while the block runs.

    They are replaced where the arena looks them up (``arena.match.observe``,
    ``arena.transport.sign_headers`` and its ``asyncio``), as a test would patch them.
    """
    fixed = _mid_game_observation()
    headers = sign_headers(SECRET, b"{}")

    def same_observation(game: Game, seat: int) -> dict[str, Any]:
        return dict(fixed)

    def same_headers(
        secret: str | bytes, body: bytes, *, now: float | None = None, request_id: str | None = None
    ) -> dict[str, str]:
        return headers

    replaced = {
        "observation": ("arena.match.observe", same_observation),
        "signature": ("arena.transport.sign_headers", same_headers),
        "deadline": ("arena.transport.asyncio", _NoDeadline()),
    }
    with contextlib.ExitStack() as stack:
        for step in steps:
            target, constant = replaced[step]
            stack.enter_context(mock.patch(target, constant))
        yield


# -- (b) concurrency and (d) memory, each in a worker process of its own ---------------------------


def _play_short(loop: WorkerLoop, client: BotClient, url: str, seed: int) -> int:
    """Play one short match on the worker loop from this thread; return the seats' faults."""
    outcome = loop.run(
        play_match(
            variant=SHORT_VARIANT,
            seed=seed,
            seats=_seats(client, url),
            limits=client.limits,
            match_id=f"conc-{seed}",
        )
    )
    return sum(s.stats.fault_count for s in outcome.seats)


def _in_flight(
    loop: WorkerLoop, client: BotClient, url: str, seeds: Sequence[int]
) -> tuple[float, int]:
    """Play ``seeds`` at once, a thread each; return the seconds until all ended and the faults.

    The bots always answer in time, so a fault means the worker fell behind.
    """
    started = time.perf_counter()
    with ThreadPoolExecutor(len(seeds)) as pool:
        faults = sum(pool.map(lambda seed: _play_short(loop, client, url, seed), seeds))
    return time.perf_counter() - started, faults


def _concurrency_worker(url: str, rounds: int, in_flight: int, serial: int, out: Any) -> None:
    loop = worker_loop()
    client = loop.client(limits=Limits(time_limit_ms=1000, max_connections=1024), policy=LOOPBACK)
    _in_flight(loop, client, url, [0])
    one, many, faults = [], [], 0
    for r in range(rounds):
        base = (r + 1) * 1000
        for side in ("one", "many") if r % 2 == 0 else ("many", "one"):
            if side == "one":
                elapsed = 0.0
                for i in range(serial):
                    seconds, missed = _in_flight(loop, client, url, [base + i])
                    elapsed, faults = elapsed + seconds, faults + missed
                one.append(serial / elapsed)
            else:
                seconds, missed = _in_flight(loop, client, url, range(base, base + in_flight))
                many.append(in_flight / seconds)
                faults += missed
    out.put({"one": one, "many": many, "faults": faults, "peak_rss_mb": _peak_rss_mb()})


def _memory_worker(url: str, in_flight: int, out: Any) -> None:
    loop = worker_loop()
    client = loop.client(limits=Limits(time_limit_ms=1000, max_connections=1024), policy=LOOPBACK)
    _in_flight(loop, client, url, [0])  # modules loaded, loop and pool started
    at_rest = _current_rss_mb()
    seconds, faults = _in_flight(loop, client, url, range(1, in_flight + 1))
    out.put(
        {"at_rest_mb": at_rest, "peak_rss_mb": _peak_rss_mb(), "seconds": seconds, "faults": faults}
    )


def _in_fresh_process(target: Callable[..., None], *args: Any) -> dict[str, Any]:
    """Run ``target(*args, queue)`` in a newly started interpreter and return what it puts."""
    spawn = multiprocessing.get_context("spawn")
    out = spawn.Queue()
    proc = spawn.Process(target=target, args=(*args, out))
    proc.start()
    while True:
        try:
            result = out.get(timeout=1)
        except queue.Empty:
            if not proc.is_alive():
                raise RuntimeError(f"the worker process ended with {proc.exitcode}") from None
        else:
            proc.join()
            return result


def _peak_rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


# -- (c) round trips ----------------------------------------------------------------------------


def bench_round_trip(url: str, calls: int) -> float:
    """Return the median milliseconds of one signed ``play`` call through BotClient."""
    message = _sample_play_message()

    async def main() -> float:
        async with BotClient(limits=Limits(time_limit_ms=2000), policy=LOOPBACK) as client:
            await client.call(url, SECRET, message)
            times = []
            for _ in range(calls):
                started = time.perf_counter()
                await client.call(url, SECRET, message)
                times.append((time.perf_counter() - started) * 1000)
            return statistics.median(times)

    return asyncio.run(main())


def _sample_play_message() -> dict[str, Any]:
    game = Game(preset("oh-hell"), PLAYERS, 7)
    while game.phase is Phase.BID:
        game.bid(game.legal_bids()[0])
    return decision_message(
        MessageType.PLAY,
        game.observation(game.acting_seat),
        game.legal_cards(),
        match_id="rt",
        time_limit_ms=1000,
        time_bank_ms=DEFAULT_TIME_BANK_MS,
    )


# -- report -------------------------------------------------------------------------------------


def _print_overhead(title: str, bots: str, rounds: int, a: dict[str, Any]) -> None:
    print(
        f"{title}: {OVERHEAD_VARIANT.name}, {PLAYERS} {bots}, "
        f"{a['decisions']} decisions a round, mean body {a['body_bytes']:.0f} bytes, "
        f"{rounds} paired rounds: median (lowest-highest)"
    )
    print(f"    raw aiohttp, pre-encoded bodies      {spread(a['raw_us'])} us")
    print(f"    raw aiohttp, json= and .json()       {spread(a['typical_us'])} us")
    print(f"    arena decision                       {spread(a['arena_us'])} us")
    print(f"    arena / raw pre-encoded              {spread(a['ratio'])} (target <= 1.20)")
    print(f"    arena / raw json= and .json()        {spread(a['ratio_typical'])}")
    print("    CPU time of the calling process per decision (bots apart):")
    print(f"    raw aiohttp, pre-encoded bodies      {spread(a['raw_cpu_us'])} us")
    print(f"    arena decision                       {spread(a['arena_cpu_us'])} us")
    print(f"    arena / raw pre-encoded              {spread(a['ratio_cpu'])}")


def main() -> None:
    """Run the measurements and print each beside its anchor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds per figure")
    parser.add_argument("--matches", type=int, default=2, help="overhead: matches per round")
    parser.add_argument("--in-flight", type=int, default=50, help="concurrency: matches at once")
    parser.add_argument("--serial", type=int, default=3, help="concurrency: one-at-a-time matches")
    parser.add_argument("--memory-in-flight", type=int, default=200, help="memory: matches at once")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke run")
    parser.add_argument("--parts", default="abcde", help="which measurements to run, e.g. ab")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.matches, args.serial = 2, 1, 2

    with Bots() as bots:
        instant = bots.start(_serve_legal_first, 0.0)
        slow = bots.start(_serve_legal_first, 0.02)

        if "a" in args.parts:
            _print_overhead(
                "(a) overhead per decision",
                "instant bots",
                args.rounds,
                bench_overhead(instant, args.rounds, args.matches),
            )

        if "b" in args.parts:
            b = _in_fresh_process(
                _concurrency_worker, slow, args.rounds, args.in_flight, args.serial
            )
            ratios = [m / o for o, m in zip(b["one"], b["many"], strict=True)]
            print(
                f"(b) concurrency: 20 ms bots, {SHORT_VARIANT.name} max_cards=3 order=down, "
                f"{PLAYERS} seats, one worker process (one WorkerLoop, a thread per match), "
                f"{args.rounds} paired rounds: median (lowest-highest)"
            )
            print(f"    one match at a time     {spread(b['one'])} matches/s")
            print(f"    {args.in_flight} matches in flight   {spread(b['many'])} matches/s")
            print(f"    ratio                   {spread(ratios)} (target >= 40)")
            print(f"    worker peak RSS         {b['peak_rss_mb']:.0f} MB (target < 100 MB)")
            print(f"    faults (worker behind)  {b['faults']}")

        if "k" in args.parts:
            print(
                f"(k) what the arena's own steps cost: (a) with the named steps replaced by "
                f"constants, {args.rounds} paired rounds each against its own in-run anchor"
            )
            for steps in ((), *((step,) for step in STEPS), STEPS):
                with _without(steps):
                    k = bench_overhead(instant, args.rounds, args.matches)
                name = "without " + ", ".join(steps) if steps else "the arena as it is"
                print(f"    {name:<44} wall {spread(k['ratio'])}, CPU {spread(k['ratio_cpu'])}")

        example = bots.start(_serve_example_bot) if {"c", "e"} & set(args.parts) else ""
        if "e" in args.parts:
            _print_overhead(
                "(e) overhead per decision, bot on the example server",
                "bots of arena/botserver.py (aiohttp, random player)",
                args.rounds,
                bench_overhead(example, args.rounds, args.matches),
            )

        if "c" in args.parts:
            starter = bots.start_starter_bot()
            no_nodelay = bots.start(_serve_stdlib_without_nodelay)
            print("(c) round trip on loopback, one signed play call through BotClient, median")
            for name, url, calls in (
                ("example bot (aiohttp, TCP_NODELAY)", example, 500),
                ("starter bot (stdlib, TCP_NODELAY)", starter, 500),
                ("stdlib server without TCP_NODELAY", no_nodelay, 20),
            ):
                print(f"    {name:<38} {bench_round_trip(url, calls):>8.2f} ms")

        if "d" in args.parts:
            d = _in_fresh_process(_memory_worker, slow, args.memory_in_flight)
            print(
                f"(d) memory: one worker process, {args.memory_in_flight} matches in flight "
                f"(20 ms bots, a thread per match), played in {d['seconds']:.1f} s, "
                f"{d['faults']} faults (worker behind)"
            )
            print(f"    RSS at rest (loop and pool started)  {d['at_rest_mb']:.0f} MB")
            peak = d["peak_rss_mb"]
            print(f"    peak RSS                             {peak:.0f} MB (target < 150 MB)")


if __name__ == "__main__":
    main()
