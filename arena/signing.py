"""HMAC-SHA256 request signing, so a bot can tell the arena's requests from anyone else's.

Every request carries two headers::

    X-OhHell-Timestamp: <unix time in whole seconds, decimal ASCII>
    X-OhHell-Signature: sha256=<lowercase hex HMAC-SHA256>

The HMAC key is the bot's secret encoded as UTF-8. The signed material is the timestamp's
decimal ASCII text, one full stop, then the raw request body bytes exactly as sent::

    signed = b"1735689600" + b"." + body

Signing the timestamp lets a bot refuse replays: ``verify_signature`` rejects a request whose
timestamp is more than ``max_skew_s`` away from the bot's clock. This module is stdlib only so
bot authors can copy it.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

TIMESTAMP_HEADER = "X-OhHell-Timestamp"
SIGNATURE_HEADER = "X-OhHell-Signature"
SIGNATURE_PREFIX = "sha256="
DEFAULT_MAX_SKEW_S = 300


def _key(secret: str | bytes) -> bytes:
    return secret.encode() if isinstance(secret, str) else secret


def signed_material(timestamp: int | str, body: bytes) -> bytes:
    """Return the exact bytes the signature covers: ``b"<timestamp>." + body``."""
    return f"{timestamp}.".encode("ascii") + body


def signature(secret: str | bytes, timestamp: int | str, body: bytes) -> str:
    """Return the signature header value for a body sent at ``timestamp``."""
    mac = hmac.new(_key(secret), signed_material(timestamp, body), hashlib.sha256)
    return SIGNATURE_PREFIX + mac.hexdigest()


# HMAC (RFC 2104) hashes the key padded to the block size and XORed with these bytes.
_BLOCK_SIZE = hashlib.sha256().block_size
_INNER_PAD = bytes(x ^ 0x36 for x in range(256))
_OUTER_PAD = bytes(x ^ 0x5C for x in range(256))


class Signer:
    """Sign bodies with one secret, as ``signature`` does, at less cost per request.

    The HMAC's inner and outer hashes are keyed once (RFC 2104); a request then costs two hash
    copies and the hashing itself, without ``hmac.HMAC``'s wrapper objects.
    """

    __slots__ = ("_inner", "_outer")

    def __init__(self, secret: str | bytes) -> None:
        key = _key(secret)
        if len(key) > _BLOCK_SIZE:
            key = hashlib.sha256(key).digest()
        key = key.ljust(_BLOCK_SIZE, b"\0")
        self._inner = hashlib.sha256(key.translate(_INNER_PAD))
        self._outer = hashlib.sha256(key.translate(_OUTER_PAD))

    def signature(self, timestamp: str, body: bytes) -> str:
        """Return the signature header value for a body sent at ``timestamp``."""
        inner = self._inner.copy()
        inner.update(f"{timestamp}.".encode("ascii"))
        inner.update(body)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return SIGNATURE_PREFIX + outer.hexdigest()


def sign_headers(secret: str | bytes, body: bytes, *, now: float | None = None) -> dict[str, str]:
    """Return the timestamp and signature headers for a request body."""
    timestamp = str(int(time.time() if now is None else now))
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature(secret, timestamp, body)}


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
    """Tell whether a request was signed with ``secret`` recently enough not to be a replay."""
    timestamp = _header(headers, TIMESTAMP_HEADER)
    given = _header(headers, SIGNATURE_HEADER)
    if timestamp is None or given is None:
        return False
    timestamp = timestamp.strip()
    if not (timestamp.isascii() and timestamp.isdigit()) or len(timestamp) > 12:
        return False
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > max_skew_s:
        return False
    expected = signature(secret, timestamp, body)
    return hmac.compare_digest(expected.encode(), given.strip().encode("utf-8", "replace"))
