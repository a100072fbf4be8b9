"""The JavaScript starter bot runs under plain Node.js and plays whole matches through the arena."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.checker import check_bot
from arena.faults import BotHTTPStatusError
from arena.match import MatchOutcome, Seat, play_match
from arena.seats import HttpSeat, LocalSeat
from arena.signing import REQUEST_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign_headers
from arena.transport import BotClient
from engine.players import make_player
from engine.presets import preset
from tests.support.starters import BID, LIMITS, LOOPBACK, SECRET, calls, post, serving

NODE = shutil.which("node")
if NODE is None:
    pytest.skip(
        "node is not on PATH: the JavaScript starter bot (examples/starter_bot.js) is NOT tested",
        allow_module_level=True,
    )

STARTER = Path(__file__).resolve().parents[2] / "examples" / "starter_bot.js"
HELLO = b'{"protocol":"ohhell/1","type":"hello"}'


@pytest.fixture(scope="module")
def js_bot() -> Iterator[str]:
    """Start the JavaScript starter bot as its header says, on a free port, with a secret."""
    assert NODE is not None
    with serving([NODE, str(STARTER)]) as (url, line):
        assert "(checking signatures)" in line
        yield url


def _match(url: str, variant_name: str, seed: int, **options: Any) -> MatchOutcome:
    async def run() -> MatchOutcome:
        async with BotClient(limits=LIMITS, policy=LOOPBACK) as client:
            seats: list[Seat] = [
                HttpSeat(client, url, SECRET, label="js-0"),
                LocalSeat(make_player("heuristic", seed), label="heuristic"),
                HttpSeat(client, url, SECRET, label="js-2"),
                LocalSeat(make_player("random", seed + 1), label="random"),
            ]
            return await play_match(
                variant=preset(variant_name, **options),
                seed=seed,
                seats=seats,
                limits=LIMITS,
                match_id=f"js-{variant_name}-{seed}",
            )

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("variant_name", "options"),
    [
        ("oh-hell", {}),  # the hook: the dealer's forbidden bid is missing from legal
        ("la-podrida", {}),  # must-trump
        ("british-oh-hell", {"bidding": "closed"}),  # both seats asked at once
    ],
)
def test_the_js_starter_bot_plays_a_whole_match_without_a_fault(
    js_bot: str, variant_name: str, options: dict[str, Any]
) -> None:
    outcome = _match(js_bot, variant_name, seed=11, **options)

    deals = len(outcome.replay["deals"])
    assert deals == len(preset(variant_name, **options).schedule(4))
    for seat in (outcome.seats[0], outcome.seats[2]):
        assert seat.stats.fault_count == 0, seat.stats.faults
        assert not seat.stats.disqualified
        assert seat.stats.calls >= deals * 2  # a bid and at least one card every deal
        assert seat.deals == deals


def test_the_js_starter_bot_passes_the_checker(js_bot: str) -> None:
    report = asyncio.run(check_bot(js_bot, SECRET, samples=28, seed=3, policy=LOOPBACK))

    assert report.passed, report.reasons()
    assert len(report.probes) == 4 and not any(probe.accepted for probe in report.probes)


def test_the_js_starter_bot_answers_hello_and_carries_on_past_an_unknown_type(
    js_bot: str,
) -> None:
    hello, news, result, bid = calls(
        js_bot,
        [
            {"protocol": "ohhell/1", "type": "hello"},
            {"protocol": "ohhell/1", "type": "a-later-kind-of-news"},
            {"protocol": "ohhell/1", "type": "result", "totals": [10, 3]},
            BID,
        ],
    )

    assert hello.data["ok"] is True
    assert (news.status, news.data) == (200, {})
    assert (result.status, result.data) == (200, {})
    assert bid.data == {"bid": 2}  # the ace of spades and the king of trumps


def test_the_js_starter_bot_refuses_a_request_signed_with_another_secret(js_bot: str) -> None:
    with pytest.raises(BotHTTPStatusError) as info:
        calls(js_bot, [BID], secret="not-the-secret")

    assert info.value.status == 401


def test_the_js_starter_bot_refuses_a_replayed_request(js_bot: str) -> None:
    headers = {**sign_headers(SECRET, HELLO), "Content-Type": "application/json"}

    assert post(js_bot, HELLO, headers) == 200
    assert post(js_bot, HELLO, headers) == 409


# A timestamp from the future comes nearer while the request travels, so it is set well past
# the window; one from the past only gets older.
@pytest.mark.parametrize("age_s", [301, -330])
def test_the_js_starter_bot_refuses_a_timestamp_more_than_5_minutes_off(
    js_bot: str, age_s: int
) -> None:
    headers = sign_headers(SECRET, HELLO, now=time.time() - age_s)

    assert post(js_bot, HELLO, {**headers, "Content-Type": "application/json"}) == 401


@pytest.mark.parametrize(
    "bad",
    [
        {TIMESTAMP_HEADER: "+1735689600"},
        {TIMESTAMP_HEADER: "9" * 400},
        {REQUEST_ID_HEADER: "8F14E45FCEEA167A5A36DEDD4BEA2543"},
        {SIGNATURE_HEADER: "sha256=00"},
        {SIGNATURE_HEADER: "sha256=\xe9"},
    ],
)
def test_the_js_starter_bot_answers_a_hostile_header_with_a_4xx_and_keeps_serving(
    js_bot: str, bad: dict[str, str]
) -> None:
    headers = {**sign_headers(SECRET, HELLO), "Content-Type": "application/json", **bad}

    assert 400 <= post(js_bot, HELLO, headers) < 500
    assert calls(js_bot, [BID])[0].data == {"bid": 2}


def test_the_js_starter_bot_answers_a_body_that_is_not_json_with_a_400(js_bot: str) -> None:
    body = b"not json"
    headers = {**sign_headers(SECRET, body), "Content-Type": "application/json"}

    assert post(js_bot, body, headers) == 400
