"""The starter bot runs with one command and answers the arena's signed calls quickly."""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.faults import BotHTTPStatusError
from arena.limits import Limits
from arena.netpolicy import NetworkPolicy
from arena.transport import BotClient, CallResult

STARTER = Path(__file__).resolve().parents[2] / "examples" / "starter_bot.py"
SECRET = "starter-secret"
LIMITS = Limits(time_limit_ms=2000)
LOOPBACK = NetworkPolicy(allow_loopback=True)
BID = {
    "protocol": "ohhell/1",
    "type": "bid",
    "hand": ["AS", "KD", "3H", "JD"],
    "legal": [0, 1, 2, 3, 4],
    "trump": "D",
    "time_limit_ms": 2000,
}
PLAY = {
    **BID,
    "type": "play",
    "legal": ["KD", "JD"],
    "trick": {"leader": 1, "cards": ["QD"]},
}


@pytest.fixture(scope="module")
def starter_bot() -> Iterator[str]:
    """Start the starter bot as its README says, on a free port, with a secret."""
    env = {**os.environ, "OHHELL_SECRET": SECRET}
    proc = subprocess.Popen(
        [sys.executable, str(STARTER), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://[\d.]+:\d+/", line)
        assert match, line
        yield match.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def calls(url: str, messages: list[dict[str, Any]], secret: str = SECRET) -> list[CallResult]:
    async def run() -> list[CallResult]:
        async with BotClient(limits=LIMITS, policy=LOOPBACK) as client:
            return [await client.call(url, secret, m) for m in messages]

    return asyncio.run(run())


def test_the_starter_bot_answers_hello_bid_play_and_result(starter_bot: str) -> None:
    hello, bid, play, result = calls(
        starter_bot,
        [
            {"protocol": "ohhell/1", "type": "hello"},
            BID,
            PLAY,
            {"protocol": "ohhell/1", "type": "result", "totals": [10, 3]},
        ],
    )

    assert hello.data["ok"] is True
    assert bid.data == {"bid": 2}  # the ace of spades and the king of trumps
    assert play.data == {"card": "KD"}  # the only card that beats the queen
    assert isinstance(result.data, dict)


def test_the_starter_bot_always_answers_from_legal(starter_bot: str) -> None:
    results = calls(starter_bot, [{**BID, "legal": [3]}, {**PLAY, "legal": ["3H"]}])

    assert [r.data for r in results] == [{"bid": 3}, {"card": "3H"}]


def test_the_starter_bot_refuses_a_request_signed_with_another_secret(starter_bot: str) -> None:
    with pytest.raises(BotHTTPStatusError) as info:
        calls(starter_bot, [BID], secret="not-the-secret")

    assert info.value.status == 401


def test_the_starter_bot_round_trip_has_no_nagle_delay(starter_bot: str) -> None:
    results = calls(starter_bot, [PLAY] * 50)

    latencies = [r.latency_ms for r in results[5:]]
    print(
        f"starter bot round trip: median {statistics.median(latencies):.2f} ms, "
        f"max {max(latencies):.2f} ms (Nagle would add about 40 ms)"
    )
    assert all(r.data == {"card": "KD"} for r in results)
