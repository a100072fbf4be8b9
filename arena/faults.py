"""Typed faults: what a bot did wrong, kept apart from failures on the platform's side.

A ``BotFault`` is blamed on the bot: the match runner plays the documented fallback, records
the fault's kind, one sample and the latency, and goes on. An ``ArenaError`` is the platform's
own failure (client closed, resources exhausted, the worker's network down, a bug) and must
never be recorded against a bot.
"""

from __future__ import annotations

from enum import StrEnum

SAMPLE_CHARS = 200


class FaultKind(StrEnum):
    """The kinds of fault a bot can commit; the values are stored with match results."""

    TIMEOUT = "timeout"
    CONNECTION_ERROR = "connection_error"
    HTTP_STATUS = "http_status"
    # HTTP 401 or 403 to a request signed with the bot's secret: it checks with another one.
    REFUSED = "refused"
    NOT_JSON = "not_json"
    WRONG_SHAPE = "wrong_shape"
    ILLEGAL_ACTION = "illegal_action"
    OVERSIZE = "oversize"
    REDIRECT = "redirect"
    FORBIDDEN_ADDRESS = "forbidden_address"
    # The match passed its cap on total duration and this seat had used more than its share of
    # it: its remaining decisions are the fallback, without a call (arena/match.py).
    MATCH_TIME = "match_time"


def safe_text(raw: bytes | str, limit: int = SAMPLE_CHARS) -> str:
    """Turn anything a bot sent into text safe to store and show: at most ``limit`` characters,
    bytes that are not UTF-8, NUL and other control characters and lone surrogates escaped."""
    text = raw.decode("utf-8", "backslashreplace") if isinstance(raw, bytes) else str(raw)
    text = "".join(
        c if c.isprintable() or c in "\n\t" else c.encode("unicode_escape").decode("ascii")
        for c in text[: limit + 1]
    )
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


def make_sample(raw: bytes | str | None, limit: int = SAMPLE_CHARS) -> str | None:
    """Shorten what the bot sent to a printable sample safe to store and show its owner."""
    return None if raw is None else safe_text(raw, limit)


class BotFault(Exception):
    """A call to a bot failed because of the bot; carries what a fault record needs."""

    kind: FaultKind

    def __init__(
        self, detail: str, *, sample: str | None = None, latency_ms: float | None = None
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.sample = sample
        self.latency_ms = latency_ms

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.detail!r}, latency_ms={self.latency_ms!r})"


class BotTimeout(BotFault):
    """The whole exchange did not finish within the time limit plus grace."""

    kind = FaultKind.TIMEOUT


class MatchTimeSpent(BotFault):
    """The match passed ``Limits.max_match_s`` and the seat had used at least its share of it."""

    kind = FaultKind.MATCH_TIME


class BotConnectionError(BotFault):
    """Connecting failed, the connection was reset, or the answer was not valid HTTP."""

    kind = FaultKind.CONNECTION_ERROR


class BotHTTPStatusError(BotFault):
    """The bot answered with a status other than 2xx (and not a redirect)."""

    kind = FaultKind.HTTP_STATUS

    def __init__(
        self,
        detail: str,
        *,
        status: int,
        sample: str | None = None,
        latency_ms: float | None = None,
    ) -> None:
        super().__init__(detail, sample=sample, latency_ms=latency_ms)
        self.status = status


class BotRefusedError(BotHTTPStatusError):
    """The bot answered 401 or 403 to a correctly signed request: it refused the signature."""

    kind = FaultKind.REFUSED


# The statuses by which a bot refuses a request's signature.
REFUSAL_STATUSES = frozenset({401, 403})
REFUSAL_ADVICE = "the secret is the likely cause: the bot checks signatures with another secret"


class BotRedirectError(BotHTTPStatusError):
    """The bot answered 3xx; redirects are never followed, so this is a fault."""

    kind = FaultKind.REDIRECT


class BotOversizeError(BotFault):
    """The answer body was larger than ``Limits.max_response_bytes``."""

    kind = FaultKind.OVERSIZE


class BotForbiddenAddressError(BotFault):
    """The endpoint led to an address the network policy refuses."""

    kind = FaultKind.FORBIDDEN_ADDRESS


class BotProtocolError(BotFault):
    """The answer arrived but breaks the protocol; subclasses say how."""

    kind = FaultKind.WRONG_SHAPE


class BotNotJSONError(BotProtocolError):
    """The body was not UTF-8 JSON."""

    kind = FaultKind.NOT_JSON


class BotWrongShapeError(BotProtocolError):
    """The JSON was not an object, or lacked the expected field of the expected type."""

    kind = FaultKind.WRONG_SHAPE


class BotIllegalActionError(BotProtocolError):
    """The bid or card was well formed but not among the legal answers sent."""

    kind = FaultKind.ILLEGAL_ACTION


class ArenaError(Exception):
    """A failure on the platform's side; never blamed on a bot."""


class ClientClosedError(ArenaError):
    """The bot client was used after it was closed."""


class ArenaResourceError(ArenaError):
    """The worker ran out of a local resource (file descriptors, ports, memory) while calling."""


class RequestEncodingError(ArenaError):
    """The arena built a request that cannot be encoded as JSON: a bug on our side."""


class ArenaNetworkError(ArenaError):
    """The worker's own network was down past ``Limits.outage_wait_s``, in all, in a match."""
