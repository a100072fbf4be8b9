"""BotClient against real bots on loopback: every misbehaviour ends as the right typed fault."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import pytest

from arena.faults import (
    ArenaError,
    BotFault,
    BotHTTPStatusError,
    BotRedirectError,
    ClientClosedError,
    FaultKind,
    RequestEncodingError,
)
from arena.limits import Limits
from arena.netpolicy import NetworkPolicy
from arena.signing import verify_signature
from arena.transport import BotClient, CallResult
from tests.support.hostile_bots import HostileBots

LOOPBACK = NetworkPolicy(allow_loopback=True)
LIMITS = Limits(time_limit_ms=150, grace_ms=100, max_response_bytes=64 * 1024)
# Generous: these tests check that a call is cut, not how precisely.
MARGIN_S = 1.0

BID = {
    "protocol": "ohhell/1",
    "type": "bid",
    "hand": ["TD", "AS", "3H"],
    "legal": [0, 1, 2, 3],
    "time_limit_ms": 150,
}
PLAY = {**BID, "type": "play", "legal": ["TD", "AS"]}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def call(url: str, message: dict[str, Any], **kwargs: Any) -> CallResult:
    async with BotClient(limits=LIMITS, policy=LOOPBACK) as client:
        return await client.call(url, "s3cret", message, **kwargs)


def fault_of(url: str, message: dict[str, Any] = PLAY) -> tuple[BotFault, float]:
    started = time.monotonic()
    with pytest.raises(BotFault) as info:
        run(call(url, message))
    return info.value, time.monotonic() - started


def test_a_fast_bot_answers_with_its_json_object_and_a_latency(hostile_bots: HostileBots) -> None:
    result = run(call(hostile_bots["fast"], PLAY))

    assert result.data == {"card": "TD"}
    assert result.status == 200
    assert 0 < result.latency_ms < 1000


def test_the_request_is_compact_signed_json_that_the_bot_can_verify(
    hostile_bots: HostileBots,
) -> None:
    run(call(hostile_bots["fast"], BID))

    received = hostile_bots.received["fast"][-1]
    assert received.body == json.dumps(BID, separators=(",", ":")).encode()
    assert received.headers["content-type"] == "application/json"
    assert received.headers["accept-encoding"] == "identity"
    assert verify_signature("s3cret", received.body, received.headers)
    assert not verify_signature("other", received.body, received.headers)
    assert not verify_signature("s3cret", received.body + b" ", received.headers)


def test_hello_sends_the_protocol_and_type_and_any_json_object_passes(
    hostile_bots: HostileBots,
) -> None:
    async def hello() -> CallResult:
        async with BotClient(limits=LIMITS, policy=LOOPBACK) as client:
            return await client.hello(hostile_bots["fast"], "s3cret")

    result = run(hello())

    sent = json.loads(hostile_bots.received["fast"][-1].body)
    assert sent["protocol"] == "ohhell/1"
    assert sent["type"] == "hello"
    assert result.data["ok"] is True


@pytest.mark.parametrize(
    ("bot", "kind"),
    [
        ("sleeps_forever", FaultKind.TIMEOUT),
        ("trickles", FaultKind.TIMEOUT),
        ("trickles_body", FaultKind.TIMEOUT),
        ("fifty_megabytes", FaultKind.OVERSIZE),
        ("fifty_megabytes_chunked", FaultKind.OVERSIZE),
        # aiohttp refuses a head past its limits as invalid HTTP, like any other.
        ("endless_headers", FaultKind.CONNECTION_ERROR),
        ("long_header_line", FaultKind.CONNECTION_ERROR),
        ("gzip_bomb", FaultKind.NOT_JSON),
        ("not_json", FaultKind.NOT_JSON),
        ("json_list", FaultKind.WRONG_SHAPE),
        ("server_error", FaultKind.HTTP_STATUS),
        ("redirects", FaultKind.REDIRECT),
        ("resets", FaultKind.CONNECTION_ERROR),
        ("garbage", FaultKind.CONNECTION_ERROR),
    ],
)
def test_each_hostile_bot_gets_its_fault_within_the_limit_plus_grace(
    hostile_bots: HostileBots, bot: str, kind: FaultKind
) -> None:
    fault, elapsed = fault_of(hostile_bots[bot])

    assert fault.kind == kind, fault
    assert elapsed < LIMITS.deadline_s(LIMITS.time_limit_ms) + MARGIN_S
    assert fault.latency_ms is not None
    assert fault.latency_ms < (LIMITS.deadline_s(LIMITS.time_limit_ms) + MARGIN_S) * 1000


def test_a_bid_gets_twice_the_time_of_a_play_before_the_cut(hostile_bots: HostileBots) -> None:
    fault, elapsed = fault_of(hostile_bots["sleeps_forever"], BID)

    assert fault.kind == FaultKind.TIMEOUT
    assert elapsed >= LIMITS.deadline_s(2 * LIMITS.time_limit_ms) - 0.05
    assert elapsed < LIMITS.deadline_s(2 * LIMITS.time_limit_ms) + MARGIN_S


def test_a_redirect_is_never_followed_and_its_location_is_the_sample(
    hostile_bots: HostileBots,
) -> None:
    fault, _ = fault_of(hostile_bots["redirects"])

    assert isinstance(fault, BotRedirectError)
    assert fault.status == 307
    assert "169.254.169.254" in (fault.sample or "")


def test_an_error_status_is_recorded_with_its_code(hostile_bots: HostileBots) -> None:
    fault, _ = fault_of(hostile_bots["server_error"])

    assert isinstance(fault, BotHTTPStatusError)
    assert fault.status == 500


def test_a_non_json_answer_keeps_a_short_sample(hostile_bots: HostileBots) -> None:
    fault, _ = fault_of(hostile_bots["not_json"])

    assert fault.sample is not None
    assert fault.sample.startswith("<html>")


def test_a_bid_of_the_wrong_type_is_a_wrong_shape_fault(hostile_bots: HostileBots) -> None:
    protocol = pytest.importorskip("arena.protocol")
    answer = run(call(hostile_bots["bid_three"], BID)).data

    with pytest.raises(BotFault) as info:
        protocol.parse_bid(answer, BID["legal"])

    assert info.value.kind == FaultKind.WRONG_SHAPE


def test_a_closed_port_is_a_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    fault, _ = fault_of(f"http://127.0.0.1:{port}/")

    assert fault.kind == FaultKind.CONNECTION_ERROR


def test_calls_to_one_bot_reuse_a_kept_alive_connection(hostile_bots: HostileBots) -> None:
    async def three_calls() -> None:
        async with BotClient(limits=LIMITS, policy=LOOPBACK) as client:
            for _ in range(3):
                await client.call(hostile_bots["fast"], "s3cret", PLAY)

    before = hostile_bots.connections["fast"]
    run(three_calls())

    assert hostile_bots.connections["fast"] == before + 1


def test_a_fault_does_not_spoil_the_next_call_on_the_same_client(
    hostile_bots: HostileBots,
) -> None:
    async def calls() -> list[Any]:
        async with BotClient(limits=LIMITS, policy=LOOPBACK) as client:
            outcomes: list[Any] = []
            for bot in ("sleeps_forever", "fast", "fifty_megabytes", "fast", "resets", "fast"):
                try:
                    outcomes.append((await client.call(hostile_bots[bot], "s", PLAY)).data)
                except BotFault as fault:
                    outcomes.append(fault.kind)
            return outcomes

    assert run(calls()) == [
        FaultKind.TIMEOUT,
        {"card": "TD"},
        FaultKind.OVERSIZE,
        {"card": "TD"},
        FaultKind.CONNECTION_ERROR,
        {"card": "TD"},
    ]


def test_concurrent_calls_to_hostile_bots_all_end_within_the_limit_plus_grace(
    hostile_bots: HostileBots,
) -> None:
    bots = ["sleeps_forever", "trickles", "fifty_megabytes", "fast", "resets"] * 4

    async def all_at_once() -> list[Any]:
        async with BotClient(limits=LIMITS, policy=LOOPBACK) as client:
            calls = (client.call(hostile_bots[b], "s", PLAY) for b in bots)
            return await asyncio.gather(*calls, return_exceptions=True)

    started = time.monotonic()
    outcomes = run(all_at_once())

    assert time.monotonic() - started < LIMITS.deadline_s(LIMITS.time_limit_ms) + MARGIN_S
    assert sum(isinstance(o, CallResult) for o in outcomes) == 4
    assert all(isinstance(o, CallResult | BotFault) for o in outcomes)


def test_using_a_closed_client_is_a_platform_error_not_a_bot_fault(
    hostile_bots: HostileBots,
) -> None:
    async def after_close() -> None:
        client = BotClient(limits=LIMITS, policy=LOOPBACK)
        await client.close()
        await client.call(hostile_bots["fast"], "s", PLAY)

    with pytest.raises(ClientClosedError) as info:
        run(after_close())

    assert isinstance(info.value, ArenaError)
    assert not isinstance(info.value, BotFault)


def test_a_request_that_is_not_json_serialisable_is_a_platform_error(
    hostile_bots: HostileBots,
) -> None:
    with pytest.raises(RequestEncodingError):
        run(call(hostile_bots["fast"], {"type": "play", "hand": {1, 2}}))
