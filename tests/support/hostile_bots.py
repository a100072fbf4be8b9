"""Real bot servers on loopback, each with one scripted behaviour, most of them hostile.

``HostileBots`` starts one asyncio server per behaviour on an ephemeral port, all in one
background thread, and gives their URLs by name. The servers speak just enough HTTP/1.1 to be
realistic: they read the request line, headers and body, and keep connections alive.
``BotTable`` seats a few bots on chosen loopback addresses (127.0.0.1, 127.0.0.2, ...). A
``Broker`` is a TCP listener standing in for the platform's own infrastructure, which the
arena's network check connects to; an ``Outage`` silences every bot and takes the broker down at
once for a while, as the worker losing its own network would.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
import socket
import struct
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Self

import pytest

from arena.netcheck import TcpCheck
from tests.support.loops import LoopServers

FIFTY_MB = 50 * 1024 * 1024


@dataclass(frozen=True)
class Received:
    """One request as a bot saw it."""

    headers: dict[str, str]
    body: bytes


Handler = Callable[[Received, asyncio.StreamWriter], Awaitable[bool]]
Connection = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def http_response(body: bytes, status: str = "200 OK", extra: str = "") -> bytes:
    """Return a complete HTTP/1.1 response with a Content-Length."""
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def polite_answer(request: dict[str, Any]) -> dict[str, Any]:
    """Answer like a well-behaved bot: the first legal bid or card."""
    kind = request.get("type")
    if kind == "bid":
        return {"bid": request["legal"][0]}
    if kind == "play":
        return {"card": request["legal"][0]}
    return {"ok": True, "name": "polite"}


async def fast(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(http_response(json.dumps(polite_answer(json.loads(req.body))).encode()))
    return True


async def sleeps_forever(req: Received, writer: asyncio.StreamWriter) -> bool:
    await asyncio.sleep(3600)
    return False


async def trickles(req: Received, writer: asyncio.StreamWriter) -> bool:
    for byte in http_response(b'{"bid": 1}' + b" " * 100):
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(1)
    return False


async def trickles_body(req: Received, writer: asyncio.StreamWriter) -> bool:
    body = b'{"bid": 1}' + b" " * 100
    writer.write(http_response(body)[: -len(body)])
    for byte in body:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(1)
    return False


async def fifty_megabytes(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(f"HTTP/1.1 200 OK\r\nContent-Length: {FIFTY_MB}\r\n\r\n".encode())
    return await _stream(writer, FIFTY_MB)


async def fifty_megabytes_chunked(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"[" * 65536
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    for _ in range(FIFTY_MB // len(chunk)):
        writer.write(framed)
        await writer.drain()
    writer.write(b"0\r\n\r\n")
    return False


async def _stream(writer: asyncio.StreamWriter, size: int, fill: bytes = b" ") -> bool:
    block = fill * 65536
    for _ in range(size // len(block)):
        writer.write(block)
        await writer.drain()
    return False


async def endless_headers(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(b"HTTP/1.1 200 OK\r\n")
    block = b"X-Padding: " + b"a" * 100 + b"\r\n"
    for _ in range(FIFTY_MB // len(block) // 64):
        writer.write(block * 64)
        await writer.drain()
    return False


async def long_header_line(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(b"HTTP/1.1 200 OK\r\nX-Long: ")
    return await _stream(writer, FIFTY_MB, b"a")


@functools.cache
def fifty_megabytes_gzipped() -> bytes:
    """Return about 50 kB that a client which decompresses would inflate to 50 MB."""
    return gzip.compress(b" " * FIFTY_MB, compresslevel=9)


async def gzip_bomb(req: Received, writer: asyncio.StreamWriter) -> bool:
    body = fifty_megabytes_gzipped()
    writer.write(http_response(body, extra="Content-Encoding: gzip\r\n"))
    return True


async def not_json(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(http_response(b"<html><body>I am a teapot</body></html>"))
    return True


async def json_list(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(http_response(b"[1, 2, 3]"))
    return True


async def bid_three(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(http_response(b'{"bid": "three"}'))
    return True


async def server_error(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(http_response(b'{"error": "boom"}', status="500 Internal Server Error"))
    return True


async def redirects(req: Received, writer: asyncio.StreamWriter) -> bool:
    location = "Location: http://169.254.169.254/latest/meta-data/\r\n"
    writer.write(http_response(b"", status="307 Temporary Redirect", extra=location))
    return True


NUL_BODY = gzip.compress(b"\x00" * 64 + b"not json")


async def gzip_nul(req: Received, writer: asyncio.StreamWriter) -> bool:
    """A gzip body full of NUL bytes, declared as gzip (the client may inflate it)."""
    writer.write(http_response(NUL_BODY, extra="Content-Encoding: gzip\r\n"))
    return True


async def gzip_nul_undeclared(req: Received, writer: asyncio.StreamWriter) -> bool:
    """The same gzip bytes (NUL in the header and body) with no Content-Encoding."""
    writer.write(http_response(NUL_BODY))
    return True


async def redirects_not_utf8(req: Received, writer: asyncio.StreamWriter) -> bool:
    """A redirect whose Location header is raw bytes that are not UTF-8."""
    head = b"HTTP/1.1 302 Found\r\nLocation: http://x/\xff\xfe\xc3\r\nContent-Length: 0\r\n\r\n"
    writer.write(head)
    return True


async def resets(req: Received, writer: asyncio.StreamWriter) -> bool:
    sock = writer.get_extra_info("socket")
    # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
    return False


async def garbage(req: Received, writer: asyncio.StreamWriter) -> bool:
    writer.write(b"this is not HTTP at all\r\n\r\n")
    return False


# -- valid JSON, wrong decisions: these play whole matches -------------------------------------

DECK = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]


def reply_json(writer: asyncio.StreamWriter, data: dict[str, Any]) -> bool:
    """Answer 200 with ``data`` as JSON and keep the connection open."""
    writer.write(http_response(json.dumps(data).encode()))
    return True


def _decision_bot(
    *,
    bid: Callable[[dict[str, Any]], Any] | None = None,
    play: Callable[[dict[str, Any]], Any] | None = None,
) -> Handler:
    """Answer politely except where ``bid`` or ``play`` gives the (bad) answer to send."""

    async def handler(req: Received, writer: asyncio.StreamWriter) -> bool:
        request = json.loads(req.body)
        kind = request.get("type")
        if kind == "bid" and bid is not None:
            return reply_json(writer, bid(request))
        if kind == "play" and play is not None:
            return reply_json(writer, play(request))
        return reply_json(writer, polite_answer(request))

    return handler


def _held_but_not_legal(request: dict[str, Any]) -> dict[str, Any]:
    """A real card that is not legal: one held when following suit forbids it, else one not held."""
    legal = set(request["legal"])
    held = [card for card in request["hand"] if card not in legal]
    return {"card": (held or [card for card in DECK if card not in request["hand"]])[0]}


def _not_held(request: dict[str, Any]) -> dict[str, Any]:
    return {"card": next(card for card in DECK if card not in request["hand"])}


_faults_by_match: dict[str, int] = {}


def _faults_twice_then_polite(request: dict[str, Any]) -> dict[str, Any]:
    """Bid 99 or play ZZ on a match's first two decisions, then answer the first legal action."""
    seen = _faults_by_match[request["match_id"]] = _faults_by_match.get(request["match_id"], 0) + 1
    if seen > 2:
        return polite_answer(request)
    return {"bid": 99} if request["type"] == "bid" else {"card": "ZZ"}


DECISION_BEHAVIOURS: dict[str, Handler] = {
    "plays_illegal_card": _decision_bot(play=_held_but_not_legal),
    "plays_card_not_held": _decision_bot(play=_not_held),
    "plays_not_a_card": _decision_bot(play=lambda r: {"card": "ZZ"}),
    "omits_card": _decision_bot(play=lambda r: {}),
    "bids_too_high": _decision_bot(bid=lambda r: {"bid": r["hand_size"] + 5}),
    "bids_negative": _decision_bot(bid=lambda r: {"bid": -1}),
    "bids_true": _decision_bot(bid=lambda r: {"bid": True}),
    "faults_twice": _decision_bot(bid=_faults_twice_then_polite, play=_faults_twice_then_polite),
}

BEHAVIOURS: dict[str, Handler] = {
    "fast": fast,
    "sleeps_forever": sleeps_forever,
    "trickles": trickles,
    "trickles_body": trickles_body,
    "fifty_megabytes": fifty_megabytes,
    "fifty_megabytes_chunked": fifty_megabytes_chunked,
    "endless_headers": endless_headers,
    "long_header_line": long_header_line,
    "gzip_bomb": gzip_bomb,
    "not_json": not_json,
    "json_list": json_list,
    "bid_three": bid_three,
    "server_error": server_error,
    "redirects": redirects,
    "gzip_nul": gzip_nul,
    "gzip_nul_undeclared": gzip_nul_undeclared,
    "redirects_not_utf8": redirects_not_utf8,
    "resets": resets,
    "garbage": garbage,
    **DECISION_BEHAVIOURS,
}


async def read_request(reader: asyncio.StreamReader) -> Received | None:
    """Read one HTTP request, or return None when the client closed the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    headers: dict[str, str] = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Received(headers, body)


class HostileBots(LoopServers):
    """Run every behaviour as its own loopback server in a background thread."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: dict[str, str] = {}
        self.received: dict[str, list[Received]] = {name: [] for name in BEHAVIOURS}
        self.connections: dict[str, int] = dict.fromkeys(BEHAVIOURS, 0)
        self._servers: list[asyncio.Server] = []

    def __enter__(self) -> Self:
        fifty_megabytes_gzipped()  # slow to build: never inside a timed call
        return super().__enter__()

    def __getitem__(self, name: str) -> str:
        return self.urls[name]

    async def _start(self) -> None:
        for name, handler in BEHAVIOURS.items():
            server = await asyncio.start_server(self._serve(name, handler), "127.0.0.1", 0)
            self._servers.append(server)
            self.urls[name] = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/bot"

    async def _stop(self) -> None:
        for server in self._servers:
            server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _serve(self, name: str, handler: Handler) -> Connection:
        def connected() -> None:
            self.connections[name] += 1

        return serve_connection(handler, self.received[name], connected)


def serve_connection(
    handler: Handler, received: list[Received], connected: Callable[[], None] = lambda: None
) -> Connection:
    """Serve one bot's connections: keep each request in ``received``, answer with ``handler``."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connected()
        try:
            while (req := await read_request(reader)) is not None:
                received.append(req)
                keep_alive = await handler(req, writer)
                await writer.drain()
                if not keep_alive:
                    break
        # Cancelled when the servers stop: end quietly, as an ordinary closed connection does.
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    return serve


@pytest.fixture(scope="session")
def hostile_bots() -> Iterator[HostileBots]:
    """Start the hostile bot servers once for the whole test session."""
    with HostileBots() as bots:
        yield bots


class Broker(LoopServers):
    """A TCP listener standing in for the platform's broker, in its own background thread.

    ``check()`` is the arena's network check against it; ``down_for`` closes the listener and
    opens it again on the same port later, so the check fails for real in between.
    """

    def __init__(self, host: str = "127.0.0.1") -> None:
        super().__init__()
        self.host = host
        self.port = 0
        self._server: asyncio.Server | None = None

    def check(self, timeout_s: float = 1.0) -> TcpCheck:
        """The arena's network check, connecting to this listener."""
        return TcpCheck(targets=((self.host, self.port),), timeout_s=timeout_s)

    def down_for(self, seconds: float) -> None:
        """Close the listener now and listen again after ``seconds``; returns at once."""
        asyncio.run_coroutine_threadsafe(self._down_for(seconds), self._loop)

    async def _down_for(self, seconds: float) -> None:
        await self._stop()
        await asyncio.sleep(seconds)
        await self._start()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._accepted, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    @staticmethod
    async def _accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()


class Outage:
    """A switch shared by bots: at given decision requests, none answers and the broker is down.

    The bot receiving the n-th decision request starts an outage of ``lasting_s``, so each
    starts mid-match at a known point however fast the match runs.
    """

    def __init__(self, broker: Broker, *, after_decisions: Sequence[int], lasting_s: float) -> None:
        self.broker = broker
        self.after_decisions = set(after_decisions)
        self.lasting_s = lasting_s
        self.decisions = 0
        self.started: list[float] = []

    def _silent_for(self, request: dict[str, Any]) -> float:
        """Seconds left of the outage as this request arrives (0 when the bots answer)."""
        if request.get("type") in ("bid", "play"):
            self.decisions += 1
            if self.decisions in self.after_decisions:
                self.started.append(time.monotonic())
                self.broker.down_for(self.lasting_s)
        if not self.started:
            return 0.0
        return max(self.started[-1] + self.lasting_s - time.monotonic(), 0.0)

    async def bot(self, req: Received, writer: asyncio.StreamWriter) -> bool:
        """Answer politely, except during the outage: then say nothing and drop the connection."""
        request = json.loads(req.body)
        if (silent_s := self._silent_for(request)) > 0:
            await asyncio.sleep(silent_s)
            return False
        return reply_json(writer, polite_answer(request))


class BotTable(LoopServers):
    """One server per ``(host, behaviour)`` on loopback, all in one background thread."""

    def __init__(self, bots: Sequence[tuple[str, Handler]]) -> None:
        super().__init__()
        self.bots = list(bots)
        self.urls: list[str] = []
        self.received: list[list[Received]] = [[] for _ in self.bots]
        self._servers: list[asyncio.Server] = []

    def requests(self, bot: int) -> list[dict[str, Any]]:
        """The requests bot ``bot`` received, decoded, in order."""
        return [json.loads(r.body) for r in self.received[bot]]

    async def _start(self) -> None:
        for i, (host, handler) in enumerate(self.bots):
            server = await asyncio.start_server(
                serve_connection(handler, self.received[i]), host, 0
            )
            self._servers.append(server)
            self.urls.append(f"http://{host}:{server.sockets[0].getsockname()[1]}/bot")

    async def _stop(self) -> None:
        for server in self._servers:
            server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
