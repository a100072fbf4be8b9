"""Request bodies as sent on the wire: compact JSON, with parts reused from earlier requests.

A decision request repeats what changes rarely in a match (the variant, the schedule, the
history of finished deals); late in a long match that is most of the body. A ``PartlyEncoded``
message carries the JSON text of such values beside the values themselves, so encoding it
costs only what changed. It is an ordinary dict to everyone else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from arena.faults import RequestEncodingError

# Built once: json.dumps builds a new encoder per call when given options. Requests are built
# by the arena from plain values and never hold a cycle, so the circular check is skipped.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)
_DECODER = json.JSONDecoder()


class PartlyEncoded(dict[str, Any]):
    """A message whose ``fragments`` hold the JSON text of some of its values."""

    __slots__ = ("fragments",)

    def __init__(self, fields: Mapping[str, Any], fragments: Mapping[str, str]) -> None:
        super().__init__(fields)
        self.fragments = dict(fragments)


def encode_json(value: Any) -> str:
    """Return compact JSON text for a value the arena built."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise RequestEncodingError(f"request is not JSON-serialisable: {exc}") from exc


def encode_message(message: Mapping[str, Any]) -> bytes:
    """Serialise a request compactly; the bytes sent are the bytes signed."""
    fragments = getattr(message, "fragments", None)
    if not fragments:
        return encode_json(message).encode()
    rest = dict(message)
    for key in fragments:
        del rest[key]
    head = encode_json(rest)
    tail = "".join([f',"{key}":{text}' for key, text in fragments.items()])
    return f"{head[:-1]}{tail}}}".encode() if rest else f"{{{tail[1:]}}}".encode()


class FragmentCache:
    """Keep the JSON text of a few keys' latest values, to reuse while they stay equal."""

    __slots__ = ("_keys", "_latest")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self._keys = keys
        self._latest: dict[str, tuple[Any, str]] = {}

    def wrap(self, message: dict[str, Any]) -> PartlyEncoded:
        """Return ``message`` as a PartlyEncoded carrying the JSON of the cached keys."""
        fragments = {}
        for key in self._keys:
            value = message[key]
            latest = self._latest.get(key)
            if latest is None or latest[0] != value:
                text = encode_json(value)
                # Keep a private copy: the message's own value may be changed by whoever
                # receives it, and must never alter what later messages send.
                latest = self._latest[key] = (_DECODER.decode(text), text)
            fragments[key] = latest[1]
        return PartlyEncoded(message, fragments)
