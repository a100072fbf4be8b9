"""Request bodies as sent on the wire: compact JSON, with parts kept encoded between requests.

A decision request repeats what every seat shares and what changes at most once a trick (the
variant, the schedule, the finished tricks, the history of finished deals); late in a long
match that is most of the body. ``SharedText`` keeps the JSON text of those parts for one game
and re-encodes a part only when the engine says it may have changed; a ``PartlyEncoded``
request carries that text beside its other fields, so encoding it costs only the fields that
are new. The content is the same as encoding the whole message; only the order of keys differs
(the encoded parts come first).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json.encoder import c_make_encoder, encode_basestring_ascii
from typing import TYPE_CHECKING, Any

from arena.faults import RequestEncodingError
from engine.observation import SHARED_GROUPS, shared_group, shared_versions

if TYPE_CHECKING:
    from engine.game import Game

# Requests are built by the arena from plain values and never hold a cycle, so the circular
# check is skipped. json.dumps builds a new encoder per call when given options.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)
_DECODER = json.JSONDecoder()


def _make_encode() -> Callable[[Any], str]:
    """Return the fastest function giving exactly ``_ENCODER.encode(value)``.

    ``JSONEncoder.encode`` builds its C encoder afresh on every call; with no circular check
    the C encoder keeps no state between calls, so one built here serves them all.
    """
    if c_make_encoder is None:  # an interpreter without the C accelerator
        return _ENCODER.encode
    iterencode = c_make_encoder(
        None, _ENCODER.default, encode_basestring_ascii, None, ":", ",", False, False, False
    )
    return lambda value: "".join(iterencode(value, 0))


_encode = _make_encode()


class PartlyEncoded(dict[str, Any]):
    """A request with more fields in ``members``, already encoded.

    Each of ``members`` is JSON object members (``"key":value`` joined by commas) for keys
    that are not among the dict's own. ``complete`` gives every field as a value.
    """

    __slots__ = ("members",)

    def __init__(self, fields: Mapping[str, Any], members: tuple[str, ...]) -> None:
        super().__init__(fields)
        self.members = members

    def complete(self) -> dict[str, Any]:
        """Return a plain dict of every field; the encoded ones decoded afresh."""
        encoded = ",".join(self.members)
        return {**_DECODER.decode(f"{{{encoded}}}"), **self}


def encode_json(value: Any) -> str:
    """Return compact JSON text for a value the arena built."""
    try:
        return _encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise RequestEncodingError(f"request is not JSON-serialisable: {exc}") from exc


def encode_message(message: Mapping[str, Any]) -> bytes:
    """Serialise a request compactly; the bytes sent are the bytes signed."""
    members = getattr(message, "members", None)
    head = encode_json(message)
    if not members:
        return head.encode()
    encoded = ",".join(members)
    return f"{{{encoded},{head[1:]}".encode() if message else f"{{{encoded}}}".encode()


def complete_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """Return a request with every field as a value, e.g. for an in-process player."""
    complete = getattr(message, "complete", None)
    return complete() if complete is not None else dict(message)


class SharedText:
    """The JSON text of what every seat of one game sees alike, kept until it changes.

    The engine groups those keys by what changes them (``SHARED_GROUPS``) and says when each
    group may have changed (``shared_versions``); only a changed group is built and encoded.
    """

    __slots__ = ("_game", "_groups", "_text", "_versions")

    def __init__(self, game: Game) -> None:
        self._game = game
        self._versions: tuple[Any, ...] | None = None
        self._groups = [""] * len(SHARED_GROUPS)
        self._text = ""

    def members(self) -> str:
        """Return the shared keys as JSON object members, for ``PartlyEncoded.members``."""
        versions = shared_versions(self._game)
        if versions != self._versions:
            self._refresh(versions)
        return self._text

    def _refresh(self, versions: tuple[Any, ...]) -> None:
        before = self._versions or (None,) * len(versions)
        for index, (version, old) in enumerate(zip(versions, before, strict=True)):
            if version != old:
                # A group's members: its JSON object without the braces.
                self._groups[index] = encode_json(shared_group(self._game, index))[1:-1]
        self._text = ",".join(self._groups)
        self._versions = versions
