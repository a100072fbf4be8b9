"""The starter bot runs with one command and answers the arena's signed calls quickly."""

from __future__ import annotations

import asyncio
import importlib.util
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.checker import check_bot
from arena.faults import BotHTTPStatusError
from arena.signing import REQUEST_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign_headers
from tests.support.starters import BID, LOOPBACK, SECRET, calls, post, serving

STARTER = Path(__file__).resolve().parents[2] / "examples" / "starter_bot.py"
PLAY = {
    **BID,
    "type": "play",
    "legal": ["KD", "JD"],
    "trick": {"leader": 1, "cards": ["QD"]},
}


@pytest.fixture(scope="module")
def starter_bot() -> Iterator[str]:
    """Start the starter bot as its README says, on a free port, with a secret."""
    with serving([sys.executable, str(STARTER)]) as (url, _line):
        yield url


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


def _load_starter() -> Any:
    spec = importlib.util.spec_from_file_location("starter_bot_under_test", STARTER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("timestamp", "request_id", "signature"),
    [
        ("\xb2", "0" * 32, "sha256=00"),  # passes str.isdigit(), fails int()
        ("\u0661\u0667\u0663", "0" * 32, "sha256=00"),  # Arabic-Indic digits
        ("1" * 400, "0" * 32, "sha256=00"),
        (" 1735689600", "0" * 32, "sha256=00"),
        (None, "0" * 32, "sha256=00"),
        ("1735689600", "\xb2" * 32, "sha256=00"),
        ("1735689600", "0" * 32, "sha256=\xe9"),  # compare_digest refuses non-ASCII str
        ("1735689600", "0" * 32, None),
    ],
)
def test_the_starter_verifier_refuses_hostile_headers_without_an_error(
    timestamp: str | None, request_id: str | None, signature: str | None
) -> None:
    starter = _load_starter()

    assert starter.signature_ok(SECRET, b"{}", timestamp, request_id, signature) is False


def test_the_starter_verifier_accepts_what_the_arena_signs() -> None:
    starter = _load_starter()
    headers = sign_headers(SECRET, b'{"type":"hello"}')

    assert starter.signature_ok(
        SECRET,
        b'{"type":"hello"}',
        headers[TIMESTAMP_HEADER],
        headers[REQUEST_ID_HEADER],
        headers[SIGNATURE_HEADER],
    )


@pytest.mark.parametrize(
    "bad",
    [
        {TIMESTAMP_HEADER: "\xb2"},
        {REQUEST_ID_HEADER: "\xb2" * 32},
        {SIGNATURE_HEADER: "sha256=\xe9"},
        {"Content-Length": "\xb2"},
    ],
)
def test_the_starter_bot_answers_a_hostile_header_with_a_4xx_and_keeps_serving(
    starter_bot: str, bad: dict[str, str]
) -> None:
    body = b'{"protocol":"ohhell/1","type":"hello"}'
    headers = {**sign_headers(SECRET, body), "Content-Type": "application/json", **bad}

    assert 400 <= post(starter_bot, body, headers) < 500
    assert calls(starter_bot, [BID])[0].data == {"bid": 2}


def test_the_starter_bot_refuses_a_replayed_request(starter_bot: str) -> None:
    body = b'{"protocol":"ohhell/1","type":"hello"}'
    headers = {**sign_headers(SECRET, body), "Content-Type": "application/json"}

    assert post(starter_bot, body, headers) == 200
    assert post(starter_bot, body, headers) == 409


def test_the_starter_bot_answers_a_type_it_does_not_know_with_an_empty_object(
    starter_bot: str,
) -> None:
    (news,) = calls(starter_bot, [{"protocol": "ohhell/1", "type": "a-later-kind-of-news"}])

    assert (news.status, news.data) == (200, {})


# A timestamp from the future comes nearer while the request travels, so it is set well past
# the window; one from the past only gets older.
@pytest.mark.parametrize("age_s", [301, -330])
def test_the_starter_bot_refuses_a_timestamp_more_than_5_minutes_off(
    starter_bot: str, age_s: int
) -> None:
    body = b'{"protocol":"ohhell/1","type":"hello"}'
    headers = sign_headers(SECRET, body, now=time.time() - age_s)

    assert post(starter_bot, body, {**headers, "Content-Type": "application/json"}) == 401


def test_the_starter_bot_passes_the_checker_and_its_signing_probes(starter_bot: str) -> None:
    report = asyncio.run(check_bot(starter_bot, SECRET, samples=28, seed=3, policy=LOOPBACK))

    assert report.passed, report.reasons()
    assert len(report.probes) == 4 and not any(probe.accepted for probe in report.probes)
