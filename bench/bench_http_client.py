"""Compare HTTP clients for calling bots: calls per second over keep-alive on loopback.

Run: .venv/bin/python -m bench.bench_http_client [--seconds 2] [--concurrency 16]

A fast keep-alive bot server (raw asyncio, TCP_NODELAY, small JSON answer) runs in a
separate process so the clients do not share an event loop or the GIL with it. Each client
posts the same small JSON body and parses the JSON answer, as the arena does.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import socket
import statistics
import time
from collections.abc import Awaitable, Callable

BODY = json.dumps(
    {"protocol": "ohhell/1", "type": "play", "hand": ["TD", "AS", "3H"], "legal": ["TD", "AS"]},
    separators=(",", ":"),
).encode()
ANSWER = b'{"card":"TD"}'
RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(ANSWER)).encode()
    + b"\r\n\r\n"
    + ANSWER
)


class _BotProtocol(asyncio.Protocol):
    """Answer every POST with a fixed small JSON object, keeping the connection open."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)  # a TCP server's: it can write
        self.transport = transport
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            length = 0
            for line in self.buf[:head_end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            end = head_end + 4 + length
            if len(self.buf) < end:
                return
            self.buf = self.buf[end:]
            self.transport.write(RESPONSE)


def _serve(port_queue: multiprocessing.Queue) -> None:
    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(_BotProtocol, "127.0.0.1", 0)
        port_queue.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


Rate = tuple[float, float]  # calls per second, client CPU microseconds per call


def _rate(count: int, start: float, cpu_start: float) -> Rate:
    cpu_us = (time.process_time() - cpu_start) * 1e6 / count
    return count / (time.perf_counter() - start), cpu_us


def _measure_sync(call: Callable[[], object], seconds: float) -> Rate:
    for _ in range(200):
        call()
    count, start, cpu_start = 0, time.perf_counter(), time.process_time()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(100):
            call()
        count += 100
    return _rate(count, start, cpu_start)


async def _measure_async(
    call: Callable[[], Awaitable[object]], seconds: float, concurrency: int
) -> Rate:
    for _ in range(200):
        await call()
    count, start, cpu_start = 0, time.perf_counter(), time.process_time()
    deadline = start + seconds

    async def worker() -> None:
        nonlocal count
        while time.perf_counter() < deadline:
            await call()
            count += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return _rate(count, start, cpu_start)


def bench_stdlib(url: str, seconds: float) -> Rate:
    """http.client on one persistent connection: the floor for a sync Python client."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port))
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    headers = {"Content-Type": "application/json"}

    def call() -> object:
        conn.request("POST", "/", BODY, headers)
        return json.loads(conn.getresponse().read())

    try:
        return _measure_sync(call, seconds)
    finally:
        conn.close()


def bench_httpx_sync(url: str, seconds: float) -> Rate:
    import httpx

    headers = {"Content-Type": "application/json"}
    with httpx.Client() as client:

        def call() -> object:
            return client.post(url, content=BODY, headers=headers).json()

        return _measure_sync(call, seconds)


def bench_httpx_async(url: str, seconds: float, concurrency: int) -> Rate:
    import httpx

    async def main() -> Rate:
        headers = {"Content-Type": "application/json"}
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(limits=limits) as client:

            async def call() -> object:
                return (await client.post(url, content=BODY, headers=headers)).json()

            return await _measure_async(call, seconds, concurrency)

    return asyncio.run(main())


def bench_aiohttp(url: str, seconds: float, concurrency: int) -> Rate:
    import aiohttp

    async def main() -> Rate:
        headers = {"Content-Type": "application/json"}
        connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def call() -> object:
                async with session.post(url, data=BODY, headers=headers) as resp:
                    return json.loads(await resp.read())

            return await _measure_async(call, seconds, concurrency)

    return asyncio.run(main())


def bench_bot_client(url: str, seconds: float, concurrency: int) -> Rate:
    """The arena's BotClient: signing, time limit, capped read and strict JSON on top of aiohttp."""
    from arena.limits import Limits
    from arena.netpolicy import NetworkPolicy
    from arena.transport import BotClient

    message = json.loads(BODY)

    async def main() -> Rate:
        limits = Limits(max_connections=max(concurrency, 1))
        async with BotClient(limits=limits, policy=NetworkPolicy(allow_loopback=True)) as client:

            async def call() -> object:
                return (await client.call(url, "secret", message, time_limit_ms=1000)).data

            return await _measure_async(call, seconds, concurrency)

    return asyncio.run(main())


def bench_raw_asyncio(url: str, seconds: float, concurrency: int) -> Rate:
    """A minimal keep-alive client on asyncio streams: the floor for an async Python client."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    request = (
        f"POST / HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(BODY)}\r\n\r\n"
    ).encode() + BODY

    async def main() -> Rate:
        pool: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        for _ in range(concurrency):
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.transport.get_extra_info("socket").setsockopt(
                socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
            )
            pool.append((reader, writer))

        async def call() -> object:
            reader, writer = pool.pop()
            try:
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                return json.loads(await reader.readexactly(length))
            finally:
                pool.append((reader, writer))

        try:
            return await _measure_async(call, seconds, concurrency)
        finally:
            for _, writer in pool:
                writer.close()

    return asyncio.run(main())


def main() -> None:
    """Run every client against the same server and print calls per second side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="measuring time per client")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="repeat and report the median")
    parser.add_argument("--only", default="", help="run only clients whose name contains this")
    args = parser.parse_args()

    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(ports,), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{ports.get(timeout=10)}/"
    c = args.concurrency
    cases: list[tuple[str, Callable[[], Rate]]] = [
        ("stdlib http.client (sync)", lambda: bench_stdlib(url, args.seconds)),
        ("httpx Client (sync)", lambda: bench_httpx_sync(url, args.seconds)),
        ("httpx AsyncClient x1", lambda: bench_httpx_async(url, args.seconds, 1)),
        (f"httpx AsyncClient x{c}", lambda: bench_httpx_async(url, args.seconds, c)),
        ("aiohttp ClientSession x1", lambda: bench_aiohttp(url, args.seconds, 1)),
        (f"aiohttp ClientSession x{c}", lambda: bench_aiohttp(url, args.seconds, c)),
        ("arena BotClient.call x1", lambda: bench_bot_client(url, args.seconds, 1)),
        (f"arena BotClient.call x{c}", lambda: bench_bot_client(url, args.seconds, c)),
        ("raw asyncio streams x1", lambda: bench_raw_asyncio(url, args.seconds, 1)),
        (f"raw asyncio streams x{c}", lambda: bench_raw_asyncio(url, args.seconds, c)),
    ]
    cases = [(name, run) for name, run in cases if args.only.lower() in name.lower()]
    rates: dict[str, list[Rate]] = {name: [] for name, _ in cases}
    try:
        # Round-robin, so a noisy moment on a shared machine hits every client alike.
        for _ in range(args.rounds):
            for name, run in cases:
                rates[name].append(run())
        print(f"{'client':<30} {'calls/s':>9} {'us/call':>9} {'client CPU us/call':>19}")
        for name, measured in rates.items():
            rate = statistics.median(r[0] for r in measured)
            cpu = statistics.median(r[1] for r in measured)
            print(f"{name:<30} {rate:>9.0f} {1e6 / rate:>9.0f} {cpu:>19.0f}")
    finally:
        server.terminate()
        server.join()


if __name__ == "__main__":
    main()
