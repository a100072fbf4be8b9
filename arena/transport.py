"""The one place that makes HTTP calls to bots.

``BotClient`` owns an aiohttp session with a keep-alive connection pool; a worker process keeps
one per event loop and serves all its matches through it (``arena.runtime``). Every call is a
signed ``POST`` of a compact JSON object, cut at the time limit plus grace over the whole
exchange, with the answer body capped, redirects refused and addresses checked against the
network policy. Whatever a bot does, the call ends in a ``CallResult`` or a typed ``BotFault``.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
from aiohttp.abc import AbstractResolver
from yarl import URL

from arena.faults import (
    REFUSAL_ADVICE,
    REFUSAL_STATUSES,
    ArenaResourceError,
    BotConnectionError,
    BotFault,
    BotForbiddenAddressError,
    BotHTTPStatusError,
    BotNotJSONError,
    BotOversizeError,
    BotRedirectError,
    BotRefusedError,
    BotTimeout,
    BotWrongShapeError,
    ClientClosedError,
    RequestEncodingError,
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
from arena.protocol import PROTOCOL, MessageType
from arena.signing import sign_headers

USER_AGENT = "ohhell-arena/1"
# Errors that mean this worker is out of resources: the platform's failure, not the bot's.
_LOCAL_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_HEADERS = {
    "Content-Type": "application/json",
    "User-Agent": USER_AGENT,
    # Compressed answers could expand past the size cap; ask for none.
    "Accept-Encoding": "identity",
}


@dataclass(slots=True)
class CallResult:
    """A bot's answer: the parsed JSON object and how long the whole exchange took."""

    data: dict[str, Any]
    latency_ms: float
    status: int = 200


@dataclass(frozen=True, slots=True)
class RawAnswer:
    """A 2xx answer as it came: status, body bytes (within the cap) and the exchange's time."""

    status: int
    body: bytes
    latency_ms: float


def encode_message(message: Mapping[str, Any]) -> bytes:
    """Serialise a request as compact UTF-8 JSON; the bytes sent are the bytes signed."""
    try:
        return orjson.dumps(message)
    except TypeError as exc:  # orjson.JSONEncodeError is a TypeError
        raise RequestEncodingError(f"request is not JSON-serialisable: {exc}") from exc


def decode_answer(body: bytes, latency_ms: float) -> dict[str, Any]:
    """Parse an answer strictly: UTF-8 JSON (no NaN or Infinity) whose top level is an object."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
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
    """Call bots over one keep-alive pool; use one per worker process and event loop."""

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        policy: NetworkPolicy = DEFAULT_POLICY,
        resolver: AbstractResolver | None = None,
    ) -> None:
        self.limits = limits if limits is not None else Limits()
        self.policy = policy
        # The name resolver the policy filters; the default is the system's getaddrinfo.
        self._resolver = resolver
        self._session: aiohttp.ClientSession | None = None
        self._slots: asyncio.Semaphore | None = None
        self._closed = False

    async def __aenter__(self) -> BotClient:
        self._ensure_session()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _ensure_session(self) -> tuple[aiohttp.ClientSession, asyncio.Semaphore]:
        if self._closed:
            raise ClientClosedError("the bot client is closed")
        if self._session is None or self._slots is None:
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
                headers=_HEADERS,
                timeout=aiohttp.ClientTimeout(
                    total=None, sock_connect=self.limits.connect_timeout_ms / 1000
                ),
                # Decompressing would let a small body expand past the size cap.
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
            )
            self._slots = asyncio.Semaphore(self.limits.max_connections)
        return self._session, self._slots

    async def close(self) -> None:
        """Close every pooled connection; later calls raise ClientClosedError."""
        self._closed = True
        if self._session is not None:
            await self._session.close()
            self._session = None

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
        if time_limit_ms is None:
            time_limit_ms = self.limits.time_limit_for(str(message.get("type", "")))
        body = encode_message(message)
        answer = await self._exchange(
            endpoint, body, functools.partial(sign_headers, secret, body), time_limit_ms
        )
        return CallResult(
            decode_answer(answer.body, answer.latency_ms), answer.latency_ms, answer.status
        )

    async def post_as_given(
        self, endpoint: str, body: bytes, headers: Mapping[str, str], *, time_limit_ms: int
    ) -> RawAnswer:
        """POST ``body`` with exactly ``headers`` as the signing headers, signed or not.

        For the signing probes (``arena.probes``): a non-2xx answer raises BotFault as in
        ``call``, a 2xx answer is returned whatever its body.
        """
        return await self._exchange(endpoint, body, lambda: dict(headers), time_limit_ms)

    async def _exchange(
        self,
        endpoint: str,
        body: bytes,
        headers_now: Callable[[], Mapping[str, str]],
        time_limit_ms: int,
    ) -> RawAnswer:
        session, slots = self._ensure_session()
        url = _endpoint_url(endpoint)
        deadline_s = self.limits.deadline_s(time_limit_ms)
        # Waiting for a free connection slot happens before the bot's clock starts.
        async with slots:
            headers = headers_now()
            started = time.perf_counter()
            try:
                async with (
                    asyncio.timeout(deadline_s),
                    session.post(url, data=body, headers=headers, allow_redirects=False) as resp,
                ):
                    try:
                        _check_status(resp, started)
                        raw = await self._read_capped(resp, started)
                    except BaseException:
                        # Never hand a half-read or misbehaving connection back to the pool.
                        resp.close()
                        raise
            except TimeoutError:
                raise BotTimeout(
                    f"no complete answer within {time_limit_ms} ms plus "
                    f"{self.limits.grace_ms} ms grace",
                    latency_ms=_elapsed_ms(started),
                ) from None
            except aiohttp.ClientError as exc:
                raise _connection_fault(exc, _elapsed_ms(started)) from None
        return RawAnswer(resp.status, raw, _elapsed_ms(started))

    def _read_capped(
        self, response: aiohttp.ClientResponse, started: float
    ) -> Coroutine[Any, Any, bytes]:
        """Read the answer's body, refusing one over the cap (declared or as it arrives)."""
        cap = self.limits.max_response_bytes
        length = response.content_length
        if length is None:
            return self._read_undeclared(response, cap, started)
        if length > cap:
            raise BotOversizeError(
                f"the answer declares {length} bytes, over the {cap} byte limit",
                latency_ms=_elapsed_ms(started),
            )
        # aiohttp reads no more than Content-Length, so the whole body fits the cap.
        return response.read()

    async def _read_undeclared(
        self, response: aiohttp.ClientResponse, cap: int, started: float
    ) -> bytes:
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
    return {"protocol": PROTOCOL, "type": MessageType.HELLO, "time_limit_ms": time_limit_ms}


@functools.lru_cache(maxsize=4096)
def _endpoint_url(endpoint: str) -> URL:
    try:
        url = URL(endpoint)
    except (TypeError, ValueError) as exc:
        raise BotConnectionError(f"endpoint {endpoint!r} is not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise BotForbiddenAddressError(f"endpoint {endpoint!r} is not an http(s) URL")
    if url.user is not None or url.password is not None:
        raise BotForbiddenAddressError("endpoint URLs may not carry credentials")
    return url


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
    if status in REFUSAL_STATUSES:
        raise BotRefusedError(
            f"the bot answered HTTP {status} to a correctly signed request; {REFUSAL_ADVICE}",
            status=status,
            latency_ms=_elapsed_ms(started),
        )
    raise BotHTTPStatusError(
        f"the bot answered HTTP {status}", status=status, latency_ms=_elapsed_ms(started)
    )


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, what caused it, and so on, with the OS error a failed connection keeps."""
    seen: BaseException | None = exc
    while seen is not None:
        yield seen
        if isinstance(seen, aiohttp.ClientConnectorError):
            yield seen.os_error
        seen = seen.__cause__


def _connection_fault(exc: aiohttp.ClientError, latency_ms: float) -> BotFault:
    """Translate an aiohttp error into the fault it means, or raise a platform error."""
    causes = list(_causes(exc))
    for cause in causes:
        if isinstance(cause, ForbiddenAddressError):
            return BotForbiddenAddressError(str(cause), latency_ms=latency_ms)
        if isinstance(cause, OSError) and cause.errno in _LOCAL_ERRNOS:
            raise ArenaResourceError(f"out of local resources while calling a bot: {cause}")
    return BotConnectionError(
        f"{type(exc).__name__}: {exc}", sample=make_sample(str(exc)), latency_ms=latency_ms
    )
