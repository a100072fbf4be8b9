"""The one place that makes HTTP calls to bots.

``BotClient`` owns an aiohttp session with a keep-alive connection pool. Every call is a signed
``POST`` of a compact JSON object, cut at the time limit plus grace over the whole exchange,
with the answer body capped, redirects refused and addresses checked against the network
policy. Whatever a bot does, the call ends in a ``CallResult`` or a typed ``BotFault``.
"""

from __future__ import annotations

import asyncio
import errno
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver
from multidict import CIMultiDict
from yarl import URL

from arena.deadlines import Deadlines
from arena.faults import (
    ArenaResourceError,
    BotConnectionError,
    BotFault,
    BotForbiddenAddressError,
    BotHTTPStatusError,
    BotNotJSONError,
    BotOversizeError,
    BotRedirectError,
    BotTimeout,
    BotWrongShapeError,
    ClientClosedError,
    make_sample,
)
from arena.limits import Limits
from arena.netpolicy import (
    DEFAULT_POLICY,
    ForbiddenAddressError,
    NetworkPolicy,
    PolicyResolver,
    policy_socket_factory,
)
from arena.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, Signer
from arena.wire import encode_message

PROTOCOL = "ohhell/1"
USER_AGENT = "ohhell-arena/1"
# Errors that mean this worker is out of resources: the platform's failure, not the bot's.
_LOCAL_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_CACHE_SIZE = 4096
# How aiohttp's parser reports a header line or header count past its fixed limits.
_HEADER_LIMIT_MARKERS = ("Got more than", "Too many headers")


@dataclass(slots=True)
class CallResult:
    """A bot's answer: the parsed JSON object and how long the whole exchange took."""

    data: dict[str, Any]
    latency_ms: float
    status: int = 200


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Built once: json.loads builds a new decoder per call when given options.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _decode_json(text: str) -> Any:
    """Decode exactly as ``_DECODER.decode``, faster for the usual answer: a bare object.

    An answer that is one object with no whitespace around it is decoded by the C scanner
    alone; anything else goes through the whole decoder, with its error messages.
    """
    if text[:1] == "{":
        try:
            data, end = _DECODER.scan_once(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return data
    return _DECODER.decode(text)


def decode_answer(body: bytes, latency_ms: float) -> dict[str, Any]:
    """Parse an answer strictly: UTF-8 JSON whose top level is an object."""
    try:
        data = _decode_json(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BotNotJSONError(
            "the answer is not UTF-8 JSON", sample=make_sample(body), latency_ms=latency_ms
        ) from None
    if not isinstance(data, dict):
        raise BotWrongShapeError(
            f"the answer is a JSON {type(data).__name__}, not an object",
            sample=make_sample(body),
            latency_ms=latency_ms,
        )
    return data


class BotClient:
    """Call bots over a shared keep-alive pool; use one per worker process and event loop."""

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        policy: NetworkPolicy = DEFAULT_POLICY,
        user_agent: str = USER_AGENT,
        resolver: AbstractResolver | None = None,
    ) -> None:
        self.limits = limits if limits is not None else Limits()
        self.policy = policy
        self._user_agent = user_agent
        # The name resolver the policy filters; the default is the system's getaddrinfo.
        self._resolver = resolver
        self._session: aiohttp.ClientSession | None = None
        self._slots: asyncio.Semaphore | None = None
        self._deadlines: Deadlines | None = None
        self._closed = False
        self._urls: dict[str, URL] = {}
        self._signers: dict[str, Signer] = {}
        # Built once and copied per call: aiohttp takes a CIMultiDict as it is.
        self._headers: CIMultiDict[str] = CIMultiDict(
            {
                "Content-Type": "application/json",
                "User-Agent": user_agent,
                # Compressed answers could expand past the size cap; ask for none.
                "Accept-Encoding": "identity",
            }
        )

    async def __aenter__(self) -> BotClient:
        self._ensure_session()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _ensure_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise ClientClosedError("the bot client is closed")
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self.limits.max_connections,
                limit_per_host=0,
                keepalive_timeout=self.limits.keepalive_timeout_s,
                resolver=PolicyResolver(self.policy, self._resolver),
                socket_factory=policy_socket_factory(self.policy),
                ttl_dns_cache=10,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(
                    total=None, sock_connect=self.limits.connect_timeout_ms / 1000
                ),
                # Decompressing would let a small body expand past the size cap.
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
            )
            self._slots = asyncio.Semaphore(self.limits.max_connections)
            self._deadlines = Deadlines(asyncio.get_running_loop())
        return self._session

    async def close(self) -> None:
        """Close every pooled connection; later calls raise ClientClosedError."""
        self._closed = True
        if self._deadlines is not None:
            self._deadlines.close()
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _url(self, endpoint: str) -> URL:
        url = self._urls.get(endpoint)
        if url is None:
            try:
                url = URL(endpoint)
            except (TypeError, ValueError) as exc:
                raise BotConnectionError(f"endpoint {endpoint!r} is not a URL: {exc}") from None
            if url.scheme not in ("http", "https") or not url.host:
                raise BotForbiddenAddressError(f"endpoint {endpoint!r} is not an http(s) URL")
            if url.user is not None or url.password is not None:
                raise BotForbiddenAddressError("endpoint URLs may not carry credentials")
            if len(self._urls) >= _CACHE_SIZE:
                self._urls.clear()
            self._urls[endpoint] = url
        return url

    def _signer(self, secret: str) -> Signer:
        signer = self._signers.get(secret)
        if signer is None:
            if len(self._signers) >= _CACHE_SIZE:
                self._signers.clear()
            signer = self._signers[secret] = Signer(secret)
        return signer

    async def call(
        self,
        endpoint: str,
        secret: str,
        message: Mapping[str, Any],
        *,
        time_limit_ms: int | None = None,
    ) -> CallResult:
        """POST a signed message to a bot and return its JSON object answer, or raise BotFault.

        ``time_limit_ms`` defaults to the limit for the message's type; the call is cut at that
        plus ``Limits.grace_ms``, whatever the bot does.
        """
        session = self._ensure_session()
        assert self._slots is not None and self._deadlines is not None
        if time_limit_ms is None:
            time_limit_ms = self.limits.time_limit_for(str(message.get("type", "")))
        body = encode_message(message)
        url = self._url(endpoint)
        # Waiting for a free connection slot happens before the bot's clock starts.
        await self._slots.acquire()
        try:
            headers = self._signed_headers(secret, body)
            started = time.perf_counter()
            try:
                with self._deadlines.cut_after(self.limits.deadline_s(time_limit_ms)):
                    status, raw = await self._exchange(session, url, headers, body, started)
            except TimeoutError:
                raise BotTimeout(
                    f"no complete answer within {time_limit_ms} ms plus "
                    f"{self.limits.grace_ms} ms grace",
                    latency_ms=_elapsed_ms(started),
                ) from None
            except aiohttp.ClientError as exc:
                raise _connection_fault(exc, _elapsed_ms(started)) from None
        finally:
            self._slots.release()
        latency_ms = _elapsed_ms(started)
        return CallResult(decode_answer(raw, latency_ms), latency_ms, status)

    def _signed_headers(self, secret: str, body: bytes) -> CIMultiDict[str]:
        """Return the request headers with a fresh timestamp and the body's signature."""
        timestamp = str(int(time.time()))
        headers = self._headers.copy()
        headers[TIMESTAMP_HEADER] = timestamp
        headers[SIGNATURE_HEADER] = self._signer(secret).signature(timestamp, body)
        return headers

    async def _exchange(
        self,
        session: aiohttp.ClientSession,
        url: URL,
        headers: CIMultiDict[str],
        body: bytes,
        started: float,
    ) -> tuple[int, bytes]:
        response = await session.post(url, data=body, headers=headers, allow_redirects=False)
        try:
            _check_status(response, started)
            raw = await self._read_capped(response, started)
        except BaseException:
            # Never hand a half-read or misbehaving connection back to the pool.
            response.close()
            raise
        response.release()
        return response.status, raw

    async def _read_capped(self, response: aiohttp.ClientResponse, started: float) -> bytes:
        cap = self.limits.max_response_bytes
        length = response.content_length
        if length is not None:
            if length > cap:
                raise BotOversizeError(
                    f"the answer declares {length} bytes, over the {cap} byte limit",
                    latency_ms=_elapsed_ms(started),
                )
            # Content-Length bounds what aiohttp reads, so the whole body fits the cap.
            return await response.read()
        chunks = bytearray()
        while chunk := await response.content.readany():
            chunks += chunk
            if len(chunks) > cap:
                raise BotOversizeError(
                    f"the answer is over the {cap} byte limit",
                    sample=make_sample(bytes(chunks[:200])),
                    latency_ms=_elapsed_ms(started),
                )
        return bytes(chunks)

    async def hello(
        self, endpoint: str, secret: str, *, time_limit_ms: int | None = None
    ) -> CallResult:
        """Check that a bot answers a signed ``hello`` with a 2xx JSON object."""
        limit = time_limit_ms if time_limit_ms is not None else self.limits.hello_time_limit_ms
        return await self.call(endpoint, secret, hello_message(limit), time_limit_ms=limit)


def hello_message(time_limit_ms: int) -> dict[str, Any]:
    """Return the ``hello`` request body sent at registration and in health checks."""
    return {"protocol": PROTOCOL, "type": "hello", "time_limit_ms": time_limit_ms}


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _check_status(response: aiohttp.ClientResponse, started: float) -> None:
    status = response.status
    if 200 <= status < 300:
        return
    if 300 <= status < 400:
        location = response.headers.get("Location")
        raise BotRedirectError(
            f"the bot answered {status}; redirects are never followed",
            status=status,
            sample=make_sample(f"Location: {location}" if location else None),
            latency_ms=_elapsed_ms(started),
        )
    raise BotHTTPStatusError(
        f"the bot answered HTTP {status}", status=status, latency_ms=_elapsed_ms(started)
    )


def _connection_fault(exc: aiohttp.ClientError, latency_ms: float) -> BotFault:
    """Translate an aiohttp error into the fault it means, or raise a platform error."""
    os_error = getattr(exc, "os_error", None)
    if isinstance(os_error, ForbiddenAddressError) or "forbidden by the network policy" in str(exc):
        return BotForbiddenAddressError(str(os_error or exc), latency_ms=latency_ms)
    if isinstance(exc, aiohttp.ClientResponseError) and any(
        marker in exc.message for marker in _HEADER_LIMIT_MARKERS
    ):
        return BotOversizeError(
            f"the answer's headers are too large: {exc.message}"[:300], latency_ms=latency_ms
        )
    if isinstance(os_error, OSError) and os_error.errno in _LOCAL_ERRNOS:
        raise ArenaResourceError(f"out of local resources while calling a bot: {os_error}")
    return BotConnectionError(
        f"{type(exc).__name__}: {exc}", sample=make_sample(str(exc)), latency_ms=latency_ms
    )


def call_once(
    endpoint: str,
    secret: str,
    message: Mapping[str, Any],
    *,
    time_limit_ms: int | None = None,
    limits: Limits | None = None,
    policy: NetworkPolicy = DEFAULT_POLICY,
) -> CallResult:
    """Make one call from synchronous code (e.g. verifying a bot), on a private event loop."""

    async def run() -> CallResult:
        async with BotClient(limits=limits, policy=policy) as client:
            return await client.call(endpoint, secret, message, time_limit_ms=time_limit_ms)

    return asyncio.run(run())


def hello_once(
    endpoint: str,
    secret: str,
    *,
    limits: Limits | None = None,
    policy: NetworkPolicy = DEFAULT_POLICY,
) -> CallResult:
    """Send one ``hello`` from synchronous code, on a private event loop."""

    async def run() -> CallResult:
        async with BotClient(limits=limits, policy=policy) as client:
            return await client.hello(endpoint, secret)

    return asyncio.run(run())
