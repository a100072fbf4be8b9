"""HMAC-SHA256 request signing, so a bot can tell the arena's requests from anyone else's.

Every request carries three headers::

    X-OhHell-Timestamp: <unix time in whole seconds, decimal ASCII>
    X-OhHell-Request-Id: <32 lowercase hex digits, unique to this request>
    X-OhHell-Signature: sha256=<lowercase hex HMAC-SHA256>

The HMAC key is the bot's secret encoded as UTF-8. The signed material is the timestamp's
decimal ASCII text, one full stop, the request id, one full stop, then the raw request body
bytes exactly as sent::

    signed = b"1735689600" + b"." + b"8f14e45fceea167a5a36dedd4bea2543" + b"." + body

A bot refuses a request whose timestamp is more than ``max_skew_s`` from its clock
(``verify_signature``) and a request id it has already seen within that window
(``ReplayGuard``): together they refuse every replay. This module is stdlib only so bot authors
can copy it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import re
import threading
import time
from collections.abc import Mapping

TIMESTAMP_HEADER = "X-OhHell-Timestamp"
REQUEST_ID_HEADER = "X-OhHell-Request-Id"
SIGNATURE_HEADER = "X-OhHell-Signature"
SIGNATURE_PREFIX = "sha256="
DEFAULT_MAX_SKEW_S = 300
# Only these forms are accepted; anything else (other digits, signs, spaces) is refused.
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_REQUEST_ID = re.compile(r"[0-9a-f]{32}")


def signed_material(timestamp: int | str, request_id: str, body: bytes) -> bytes:
    """Return the exact bytes the signature covers: ``b"<timestamp>.<request id>." + body``."""
    return f"{timestamp}.{request_id}.".encode("ascii") + body


def signature(secret: str | bytes, timestamp: int | str, request_id: str, body: bytes) -> str:
    """Return the signature header value for a body sent at ``timestamp`` as ``request_id``."""
    mac = _keyed(secret).copy()
    mac.update(signed_material(timestamp, request_id, body))
    return SIGNATURE_PREFIX + mac.hexdigest()


@functools.lru_cache(maxsize=4096)
def _keyed(secret: str | bytes) -> hmac.HMAC:
    """An HMAC keyed with ``secret`` and fed nothing yet, to ``copy`` for each request."""
    return hmac.new(secret.encode() if isinstance(secret, str) else secret, None, hashlib.sha256)


def sign_headers(
    secret: str | bytes, body: bytes, *, now: float | None = None, request_id: str | None = None
) -> dict[str, str]:
    """Return the timestamp, request id and signature headers for a request body."""
    timestamp = str(int(time.time() if now is None else now))
    request_id = os.urandom(16).hex() if request_id is None else request_id
    return {
        TIMESTAMP_HEADER: timestamp,
        REQUEST_ID_HEADER: request_id,
        SIGNATURE_HEADER: signature(secret, timestamp, request_id, body),
    }


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, value in headers.items():
        if key.lower() == lowered:
            return value
    return None


def verify_signature(
    secret: str | bytes,
    body: bytes,
    headers: Mapping[str, str],
    *,
    max_skew_s: float = DEFAULT_MAX_SKEW_S,
    now: float | None = None,
) -> bool:
    """Tell whether a request was signed with ``secret`` within ``max_skew_s`` of ``now``.

    Any header that is missing or not exactly in its documented form fails the check. Refusing
    a repeated request id is the caller's part: see ``ReplayGuard``.
    """
    timestamp = _header(headers, TIMESTAMP_HEADER)
    request_id = _header(headers, REQUEST_ID_HEADER)
    given = _header(headers, SIGNATURE_HEADER)
    if timestamp is None or request_id is None or given is None:
        return False
    if not _TIMESTAMP.fullmatch(timestamp) or not _REQUEST_ID.fullmatch(request_id):
        return False
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > max_skew_s:
        return False
    expected = signature(secret, timestamp, request_id, body)
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


class ReplayGuard:
    """Remember the request ids seen within the skew window; refuse any id seen twice.

    Call ``first_time`` only for requests whose signature checked, so nobody can fill the
    memory with made-up ids; an id is forgotten once its request would be refused as too old
    anyway. Safe to share between threads.
    """

    def __init__(self, max_skew_s: float = DEFAULT_MAX_SKEW_S) -> None:
        self.max_skew_s = max_skew_s
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def first_time(self, request_id: str, *, now: float | None = None) -> bool:
        """Record ``request_id``; False when it was already seen within the window."""
        current = time.time() if now is None else now
        with self._lock:
            # Dicts keep insertion order, which is arrival order: drop the expired prefix.
            horizon = current - 2 * self.max_skew_s
            while self._seen:
                oldest, seen_at = next(iter(self._seen.items()))
                if seen_at >= horizon:
                    break
                del self._seen[oldest]
            if request_id in self._seen:
                return False
            self._seen[request_id] = current
            return True
