"""A minimal, safe caller for a bot's ``hello``, used to verify bots.

The arena owns the full transport; this keeps verification self-contained until it is
swapped for the arena's client. It keeps the arena's rules: the connected address is the
checked one, redirects are not followed, the whole exchange has one deadline and the body
read is capped.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import http.client
import json
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from django.conf import settings

from tournaments.models import HealthErrorKind
from tournaments.netpolicy import EndpointRefused, IPAddress, check_endpoint_url, parse_endpoint_url

PROTOCOL = "ohhell/1"


@dataclass(frozen=True)
class HelloResult:
    """The outcome of one ``hello`` call."""

    ok: bool
    latency_ms: int | None = None
    error_kind: str = ""
    error_message: str = ""


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """Return the signature header value: HMAC-SHA256 over ``"<timestamp>." + body``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to a checked address, still verifying the certificate for the host name."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


def _read_capped(response: http.client.HTTPResponse, cap: int) -> bytes:
    chunks, size = [], 0
    while chunk := response.read1(min(65536, cap + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            raise OverflowError
    return b"".join(chunks)


def _exchange(url: str, address: IPAddress, body: bytes, headers: dict, timeout: float):
    """POST once; a timer shuts the socket at the deadline, so trickling cannot stretch it."""
    parts = parse_endpoint_url(url)
    cls = _PinnedHTTPSConnection if parts.scheme == "https" else _PinnedHTTPConnection
    port = parts.port or (443 if parts.scheme == "https" else 80)
    conn = cls(parts.hostname, port, str(address), timeout)
    expired = threading.Event()
    conn.connect()
    # Keep our own reference: the connection drops its own when the bot answers "close".
    sock = conn.sock

    def expire() -> None:
        expired.set()
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(timeout, expire)
    try:
        timer.start()
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, _read_capped(response, settings.BOT_MAX_RESPONSE_BYTES)
    except (OSError, http.client.HTTPException):
        if expired.is_set():
            raise TimeoutError from None
        raise
    finally:
        timer.cancel()
        conn.close()


def _verdict(status: int, data: bytes) -> tuple[str, str]:
    if 300 <= status < 400:
        return (
            HealthErrorKind.REDIRECT,
            f"answered a redirect ({status}); redirects are not followed",
        )
    if not 200 <= status < 300:
        return HealthErrorKind.HTTP_STATUS, f"answered HTTP {status}"
    try:
        payload = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return HealthErrorKind.NOT_JSON, "the answer is not JSON"
    if not isinstance(payload, dict):
        return HealthErrorKind.NOT_JSON, "the answer is JSON but not an object"
    return "", ""


def call_hello(*, url: str, secret: str, bot_name: str) -> HelloResult:
    """POST a signed ``hello`` to the endpoint and judge the answer."""
    body = json.dumps({"protocol": PROTOCOL, "type": "hello", "bot": bot_name}).encode()
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "X-OhHell-Timestamp": str(timestamp),
        "X-OhHell-Signature": sign(secret, body, timestamp),
    }
    started = time.monotonic()
    try:
        address = check_endpoint_url(url)[0]
        status, data = _exchange(url, address, body, headers, settings.BOT_HELLO_TIMEOUT_MS / 1000)
    except EndpointRefused as exc:
        return HelloResult(False, None, HealthErrorKind.REFUSED_ADDRESS, str(exc))
    except TimeoutError:
        return HelloResult(False, None, HealthErrorKind.TIMEOUT, "no complete answer in time")
    except OverflowError:
        limit = settings.BOT_MAX_RESPONSE_BYTES
        return HelloResult(False, None, HealthErrorKind.OVERSIZE, f"answer over {limit} bytes")
    except (OSError, http.client.HTTPException) as exc:
        return HelloResult(
            False, None, HealthErrorKind.CONNECTION, f"connection failed: {exc}"[:500]
        )
    latency_ms = round((time.monotonic() - started) * 1000)
    kind, message = _verdict(status, data)
    return HelloResult(not kind, latency_ms, kind, message)
