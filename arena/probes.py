"""Signing probes: requests a bot must refuse, to tell whether it checks what the arena signs.

The arena signs every request (``arena.signing``); a bot that answers requests nobody signed,
or signed with another secret, replayed or long past, can be driven by anyone who finds its
endpoint. Each probe sends a ``hello`` the bot must refuse: any answer but a 2xx passes (401,
409, or no answer at all); a 2xx means the bot accepted it. The checker fails a bot that
accepts any (``arena.checker``); the platform's verification reports them as warnings.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from enum import StrEnum

from arena.faults import BotFault, BotHTTPStatusError
from arena.signing import DEFAULT_MAX_SKEW_S, sign_headers
from arena.transport import BotClient, CallResult, encode_message, hello_message


class ProbeKind(StrEnum):
    """The requests a bot must refuse; the values are stored with the platform's checks."""

    UNSIGNED = "unsigned"
    FORGED = "forged"
    REPLAYED = "replayed"
    STALE = "stale"

    @property
    def warning(self) -> str:
        """What accepting this request means, in words for the bot's owner."""
        return _WARNINGS[self]


_WARNINGS = {
    ProbeKind.UNSIGNED: "it accepted a request with no signature: it checks no signature",
    ProbeKind.FORGED: "it accepted a request signed with another secret: it checks no signature",
    ProbeKind.REPLAYED: "it accepted the same request id twice: it does not refuse replays",
    ProbeKind.STALE: (
        f"it accepted a request whose timestamp is more than {DEFAULT_MAX_SKEW_S} s old: "
        "it does not check the clock"
    ),
}
# A stale probe is this far outside the window, so a bot's clock a little off still refuses it.
STALE_BY_S = 2 * DEFAULT_MAX_SKEW_S


@dataclass(frozen=True)
class ProbeResult:
    """How a bot answered one probe: ``status`` is None when no answer came."""

    kind: ProbeKind
    accepted: bool
    status: int | None

    def describe(self) -> str:
        """The probe's outcome in words."""
        if self.accepted:
            return f"{self.kind}: {self.kind.warning} (HTTP {self.status})"
        answer = "no answer" if self.status is None else f"HTTP {self.status}"
        return f"{self.kind}: refused ({answer})"


async def _send(
    client: BotClient, endpoint: str, kind: ProbeKind, body: bytes, headers: dict[str, str]
) -> ProbeResult:
    limit = client.limits.hello_time_limit_ms
    try:
        answer = await client.post_as_given(endpoint, body, headers, time_limit_ms=limit)
    except BotHTTPStatusError as refused:
        return ProbeResult(kind, accepted=False, status=refused.status)
    except BotFault:
        return ProbeResult(kind, accepted=False, status=None)
    return ProbeResult(kind, accepted=True, status=answer.status)


async def _replayed(client: BotClient, endpoint: str, secret: str, body: bytes) -> ProbeResult:
    """Send one correctly signed request, then the same bytes with the same headers again."""
    headers = sign_headers(secret, body)
    await _send(client, endpoint, ProbeKind.REPLAYED, body, headers)
    return await _send(client, endpoint, ProbeKind.REPLAYED, body, headers)


async def probe_signing(client: BotClient, endpoint: str, secret: str) -> tuple[ProbeResult, ...]:
    """Send the bot each request it must refuse; return one result per ``ProbeKind``."""
    body = encode_message(hello_message(client.limits.hello_time_limit_ms))
    forged = sign_headers(secret + "-forged", body)
    stale = sign_headers(secret, body, now=time.time() - STALE_BY_S)
    return tuple(
        await asyncio.gather(
            _send(client, endpoint, ProbeKind.UNSIGNED, body, {}),
            _send(client, endpoint, ProbeKind.FORGED, body, forged),
            _send(client, endpoint, ProbeKind.STALE, body, stale),
            _replayed(client, endpoint, secret, body),
        )
    )


@dataclass(frozen=True)
class Verification:
    """A passed ``hello`` and the bot's answers to the signing probes sent after it."""

    hello: CallResult
    probes: tuple[ProbeResult, ...]

    @property
    def accepted(self) -> tuple[ProbeKind, ...]:
        """The probes the bot should have refused and did not."""
        return tuple(probe.kind for probe in self.probes if probe.accepted)


async def verify_bot(client: BotClient, endpoint: str, secret: str) -> Verification:
    """Send a signed ``hello`` (a fault comes up as BotFault), then the signing probes."""
    hello = await client.hello(endpoint, secret)
    return Verification(hello, await probe_signing(client, endpoint, secret))
