"""Measure the arena side by side with the bare HTTP round trip it is built on.

Run: .venv/bin/python bench/bench_arena.py [--rounds 5] [--matches 3] [--quick] [--parts abc]

Three measurements, each in one run so a noisy shared machine hits both sides alike:

(a) overhead per decision: full matches between instant bots (legal[0]) through the arena
    (MatchRunner, HttpSeats, one BotClient) against the same bots called with a bare aiohttp
    session posting the very same request bodies, one after another. Best of the rounds.
(b) concurrency: bots that sleep 20 ms per decision; matches per second from one event loop and
    one BotClient with N matches in flight against one match at a time; peak RSS of the worker.
(c) round trip on loopback to the example bot server, the starter bot and, for contrast, a
    plain stdlib server without TCP_NODELAY.

Bots always run in other processes, so the worker's CPU time is the arena's alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from arena.limits import Limits  # noqa: E402
from arena.match import MatchRunner, play_match  # noqa: E402
from arena.netpolicy import NetworkPolicy  # noqa: E402
from arena.seats import HttpSeat  # noqa: E402
from arena.transport import BotClient, encode_message  # noqa: E402
from engine.presets import preset  # noqa: E402

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

    sys.path.insert(0, str(ROOT / "examples"))
    import starter_bot

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


# -- (a) overhead per decision ------------------------------------------------------------------


def _seats(client: BotClient, url: str) -> list[HttpSeat]:
    return [HttpSeat(client, f"{url}seat{s}", SECRET, label=f"s{s}") for s in range(PLAYERS)]


async def _arena_round(
    client: BotClient, url: str, seeds: Sequence[int]
) -> tuple[int, float, float]:
    decisions, wall, cpu = 0, time.perf_counter(), time.process_time()
    for seed in seeds:
        outcome = await play_match(
            variant=OVERHEAD_VARIANT,
            seed=seed,
            seats=_seats(client, url),
            limits=client.limits,
            match_id=f"bench-{seed}",
        )
        decisions += sum(s.stats.calls for s in outcome.seats)
    return decisions, time.perf_counter() - wall, time.process_time() - cpu


async def _raw_round(
    session: aiohttp.ClientSession, url: str, bodies: Sequence[bytes]
) -> tuple[int, float, float]:
    headers = {"Content-Type": "application/json"}
    wall, cpu = time.perf_counter(), time.process_time()
    for body in bodies:
        async with session.post(url, data=body, headers=headers) as response:
            json.loads(await response.read())
    return len(bodies), time.perf_counter() - wall, time.process_time() - cpu


class _Recorder:
    """A seat that answers legal[0] in-process and keeps the bytes the arena would send."""

    label = "recorder"

    def __init__(self, bodies: list[bytes]) -> None:
        self.bodies = bodies

    async def call(self, message: dict[str, Any], time_limit_ms: int) -> tuple[Any, float]:
        self.bodies.append(encode_message(message))
        kind = message["type"]
        if kind == "result":
            return {}, 0.0
        return (
            {"bid": message["legal"][0]} if kind == "bid" else {"card": message["legal"][0]}
        ), 0.0


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


def bench_overhead(url: str, rounds: int, matches: int) -> dict[str, float]:
    """Return per-decision wall and CPU microseconds, arena and raw, best of ``rounds``."""
    limits = Limits(time_limit_ms=5000)
    seeds = list(range(matches))
    bodies = _recorded_bodies(seeds, limits)

    async def main() -> dict[str, list[tuple[float, float]]]:
        results: dict[str, list[tuple[float, float]]] = {"arena": [], "raw": []}
        async with BotClient(limits=limits, policy=LOOPBACK) as client:
            session = client._ensure_session()  # the very same pool and connector
            await _arena_round(client, url, seeds[:1])  # warm up both paths
            await _raw_round(session, url, bodies[:200])
            for _ in range(rounds):
                n, wall, cpu = await _raw_round(session, url, bodies)
                results["raw"].append((wall * 1e6 / n, cpu * 1e6 / n))
                n, wall, cpu = await _arena_round(client, url, seeds)
                results["arena"].append((wall * 1e6 / n, cpu * 1e6 / n))
        return results

    results = asyncio.run(main())
    out = {"decisions": float(len(bodies)), "body_bytes": statistics.mean(map(len, bodies))}
    for side, measured in results.items():
        out[f"{side}_wall_us"] = min(m[0] for m in measured)
        out[f"{side}_cpu_us"] = min(m[1] for m in measured)
    return out


# -- (b) concurrency ----------------------------------------------------------------------------


async def _matches(client: BotClient, url: str, seeds: Sequence[int]) -> None:
    outcomes = await asyncio.gather(
        *(
            play_match(
                variant=SHORT_VARIANT,
                seed=seed,
                seats=_seats(client, url),
                limits=client.limits,
                match_id=f"conc-{seed}",
            )
            for seed in seeds
        )
    )
    faults = sum(s.stats.fault_count for o in outcomes for s in o.seats)
    if faults:
        raise RuntimeError(f"{faults} faults in the concurrency benchmark: the worker fell behind")


def bench_concurrency(url: str, rounds: int, in_flight: int, serial: int) -> dict[str, float]:
    """Return matches per second one at a time and with ``in_flight`` at once, best of rounds."""
    limits = Limits(time_limit_ms=1000, max_connections=1024)

    async def main() -> tuple[float, float]:
        one, many = 0.0, 0.0
        async with BotClient(limits=limits, policy=LOOPBACK) as client:
            await _matches(client, url, [0])
            for r in range(rounds):
                started = time.perf_counter()
                for seed in range(serial):
                    await _matches(client, url, [r * 1000 + seed])
                one = max(one, serial / (time.perf_counter() - started))
                started = time.perf_counter()
                await _matches(client, url, range(r * 1000, r * 1000 + in_flight))
                many = max(many, in_flight / (time.perf_counter() - started))
        return one, many

    one, many = asyncio.run(main())
    return {"one": one, "many": many, "peak_rss_mb": _peak_rss_mb()}


def _peak_rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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
    from arena.protocol import decision_message
    from engine.game import Game

    game = Game(preset("oh-hell"), PLAYERS, 7)
    while game.phase == "bid":
        game.bid(game.legal_bids()[0])
    seat = game.to_act
    return decision_message(
        "play", game.observation(seat), game.legal_cards(), match_id="rt", time_limit_ms=1000
    )


# -- report -------------------------------------------------------------------------------------


def main() -> None:
    """Run the three measurements and print them side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="best of this many rounds")
    parser.add_argument("--matches", type=int, default=3, help="overhead: matches per round")
    parser.add_argument("--in-flight", type=int, default=50, help="concurrency: matches at once")
    parser.add_argument("--serial", type=int, default=4, help="concurrency: one-at-a-time matches")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke run")
    parser.add_argument("--parts", default="abc", help="which measurements to run, e.g. a")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.matches, args.serial = 2, 1, 2

    with Bots() as bots:
        instant = bots.start(_serve_legal_first, 0.0)
        slow = bots.start(_serve_legal_first, 0.02)
        example = bots.start(_serve_example_bot)
        starter = bots.start_starter_bot()
        no_nodelay = bots.start(_serve_stdlib_without_nodelay)

        if "a" in args.parts:
            a = bench_overhead(instant, args.rounds, args.matches)
            added = (a["arena_wall_us"] / a["raw_wall_us"] - 1) * 100
            print(
                f"(a) overhead per decision: {OVERHEAD_VARIANT.name}, {PLAYERS} instant bots, "
                f"{a['decisions']:.0f} decisions a round, mean body {a['body_bytes']:.0f} bytes, "
                f"best of {args.rounds}"
            )
            print(f"    {'':<34} {'wall us':>8} {'CPU us':>8}")
            raw = f"{a['raw_wall_us']:>8.0f} {a['raw_cpu_us']:>8.0f}"
            print(f"    {'raw aiohttp round trip':<34} {raw}")
            print(
                f"    {'arena decision':<34} {a['arena_wall_us']:>8.0f} {a['arena_cpu_us']:>8.0f}"
            )
            print(
                f"    arena adds {added:+.0f}% wall, "
                f"{(a['arena_cpu_us'] / a['raw_cpu_us'] - 1) * 100:+.0f}% worker CPU "
                f"(target: at most +25% wall)"
            )

        if "b" in args.parts:
            b = bench_concurrency(slow, args.rounds, args.in_flight, args.serial)
            print(
                f"(b) concurrency: 20 ms bots, {SHORT_VARIANT.name} max_cards=3 order=down, "
                f"{PLAYERS} seats, one event loop and one BotClient, best of {args.rounds}"
            )
            print(f"    one match at a time     {b['one']:>8.2f} matches/s")
            print(f"    {args.in_flight} matches in flight   {b['many']:>8.2f} matches/s")
            print(
                f"    ratio {b['many'] / b['one']:.1f}x (target: at least 40x); "
                f"worker peak RSS {b['peak_rss_mb']:.0f} MB (target: under 300 MB)"
            )

        if "c" in args.parts:
            print("(c) round trip on loopback, one signed play call through BotClient, median")
            for name, url, calls in (
                ("example bot (aiohttp, TCP_NODELAY)", example, 500),
                ("starter bot (stdlib, TCP_NODELAY)", starter, 500),
                ("stdlib server without TCP_NODELAY", no_nodelay, 20),
            ):
                print(f"    {name:<38} {bench_round_trip(url, calls):>8.2f} ms")


if __name__ == "__main__":
    main()
