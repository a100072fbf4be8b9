"""A seat's time bank, charged as docs/bot-protocol.md ("The time bank") says, against real
slow bots on loopback.

The numbers leave wide margins: each slow answer takes its time limit plus a fixed extra, so it
draws at least that extra from the bank, and a bank that can cover two such answers with
hundreds of milliseconds to spare cannot cover a third. Which decision times out then depends
only on lower bounds of the bot's latency, never on how fast a loaded machine runs; the banks
reported are compared with the latencies the arena measured.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
from typing import Any

import pytest

from arena.checker import check_bot
from arena.cli import main
from arena.limits import Limits
from arena.match import MatchOutcome, play_match
from arena.netcheck import NetworkCheck
from arena.netpolicy import NetworkPolicy
from arena.seats import HttpSeat, LocalSeat
from arena.timebank import TimeBank
from arena.transport import BotClient
from engine.players import make_player
from engine.presets import preset
from tests.support.hostile_bots import (
    BotTable,
    Broker,
    Handler,
    Outage,
    Received,
    polite_answer,
    reply_json,
)

LOOPBACK = NetworkPolicy(allow_loopback=True)
HOST = "127.0.0.1"
# Deals of 3, 2 and 1 cards: the slow seat makes 3 bids and 6 plays in all.
SHORT = preset("oh-hell", max_cards=3, order="down")
LIMIT_MS, GRACE_MS, BANK_MS = 200, 100, 2200
# Where fast answers must stay within their limit, a limit no loaded machine comes near.
ROOMY_LIMIT_MS = 1000
# A slow answer takes its own time limit plus this, so it draws at least this from the bank:
# two draw at least 1600 of the 2200 ms, leaving at most 600, and the third, cut at its limit
# plus at most 600 plus the grace, is a timeout whatever the machine's speed. The second is cut
# no sooner than its limit plus 2200 - 800 - (the first's extra delay) plus the grace: 700 ms of
# margin to share between two answers' delays.
EXTRA_S = 0.8


def slow_bot(extra_s: float, slow_decisions: int | None = None) -> Handler:
    """Answer each bid or play its time limit plus ``extra_s`` late (only the first
    ``slow_decisions`` of them when given), then politely; anything else at once."""
    asked = 0

    async def handler(req: Received, writer: Any) -> bool:
        nonlocal asked
        request = json.loads(req.body)
        if request["type"] in ("bid", "play"):
            asked += 1
            if slow_decisions is None or asked <= slow_decisions:
                await asyncio.sleep(request["time_limit_ms"] / 1000 + extra_s)
        return reply_json(writer, polite_answer(request))

    return handler


async def _match(
    url: str, limits: Limits, network_check: NetworkCheck | None = None
) -> MatchOutcome:
    async with BotClient(limits=limits, policy=LOOPBACK) as client:
        seats: list[Any] = [HttpSeat(client, url, "s3cret", label="slow")]
        seats += [LocalSeat(make_player("random", i), label=f"r{i}") for i in range(2)]
        return await play_match(
            variant=SHORT,
            seed=11,
            seats=seats,
            limits=limits,
            match_id="bank-1",
            network_check=network_check,
        )


def _play(
    handler: Handler, limits: Limits, network_check: NetworkCheck | None = None
) -> tuple[MatchOutcome, list[dict[str, Any]]]:
    with BotTable([(HOST, handler)]) as table:
        outcome = asyncio.run(_match(table.urls[0], limits, network_check))
        requests = table.requests(0)
    return outcome, requests


def _decisions(outcome: MatchOutcome) -> list[dict[str, Any]]:
    return [d for d in outcome.replay["decisions"] if d["seat"] == 0]


def _limit_of(decision: dict[str, Any], play_limit_ms: int = LIMIT_MS) -> int:
    return play_limit_ms * (2 if decision["type"] == "bid" else 1)


def _drawn(decision: dict[str, Any], play_limit_ms: int = LIMIT_MS) -> float:
    """What the documented charge takes for a decision, from its latency in the replay."""
    return decision["latency_ms"] - _limit_of(decision, play_limit_ms)


def test_answers_over_the_limit_draw_on_the_bank_until_one_is_a_timeout() -> None:
    limits = Limits(
        time_limit_ms=LIMIT_MS, time_bank_ms=BANK_MS, grace_ms=GRACE_MS, max_faults_per_match=3
    )
    outcome, requests = _play(slow_bot(EXTRA_S), limits)
    decisions = _decisions(outcome)
    asked = [r for r in requests if r["type"] in ("bid", "play")]

    # The first two answers draw on the bank and count; from the third on, every call is cut.
    assert [d["fault"] for d in decisions[:5]] == [None, None, "timeout", "timeout", "timeout"]
    assert all(d["fault"] == "disqualified" for d in decisions[5:])
    assert len(asked) == 5
    # Each request tells the bank left, which is what the previous decision left.
    assert asked[0]["time_bank_ms"] == BANK_MS
    assert [r["time_bank_ms"] for r in asked[1:]] == [d["time_bank_ms"] for d in decisions[:4]]
    # The excess over the limit, rounded up to a whole millisecond, is drawn: within the
    # rounding of the replay's latencies (to 0.1 ms) of what the arena measured.
    first, second = decisions[0], decisions[1]
    assert _drawn(first) >= EXTRA_S * 1000
    assert BANK_MS - first["time_bank_ms"] == pytest.approx(_drawn(first), abs=1.1)
    assert first["time_bank_ms"] - second["time_bank_ms"] == pytest.approx(_drawn(second), abs=1.1)
    assert 0 < second["time_bank_ms"] <= BANK_MS - 2 * EXTRA_S * 1000
    # The third is cut at its limit plus the bank left plus the grace, and empties the bank.
    third = decisions[2]
    assert third["latency_ms"] >= _limit_of(third) + second["time_bank_ms"] + GRACE_MS - 0.1
    assert [d["time_bank_ms"] for d in decisions[2:]] == [0] * len(decisions[2:])
    # With the bank empty, a call is cut at the limit plus the grace, as without a bank: the
    # request said so, and the bot's answer (its limit plus 800 ms) never came in time.
    for later in decisions[3:5]:
        assert later["latency_ms"] >= _limit_of(later) + GRACE_MS - 0.1
    seat = outcome.seats[0]
    assert seat.stats.disqualified
    assert seat.to_dict()["timing"] == {
        "decisions": 5,
        "median_ms": statistics.median(d["latency_ms"] for d in decisions[:5]),
        "max_ms": max(d["latency_ms"] for d in decisions[:5]),
        "over_limit": 5,
        "time_bank_ms": BANK_MS,
        "time_bank_used_ms": BANK_MS,
        "time_bank_left_ms": 0,
    }


def test_the_result_tells_a_bot_its_own_latencies_and_bank() -> None:
    limits = Limits(time_limit_ms=ROOMY_LIMIT_MS, time_bank_ms=BANK_MS, grace_ms=GRACE_MS)
    outcome, requests = _play(slow_bot(0.5, slow_decisions=2), limits)
    decisions = _decisions(outcome)
    (result,) = [r for r in requests if r["type"] == "result"]

    assert [d["fault"] for d in decisions] == [None] * 9
    left = decisions[-1]["time_bank_ms"]
    assert left == decisions[1]["time_bank_ms"]  # fast answers draw nothing
    drawn = _drawn(decisions[0], ROOMY_LIMIT_MS) + _drawn(decisions[1], ROOMY_LIMIT_MS)
    assert drawn >= 1000
    assert BANK_MS - left == pytest.approx(drawn, abs=2.2)
    timing = result["timing"]
    assert timing == {
        "decisions": 9,
        "median_ms": timing["median_ms"],
        "max_ms": max(d["latency_ms"] for d in decisions),
        "over_limit": 2,
        "time_bank_ms": BANK_MS,
        "time_bank_used_ms": BANK_MS - left,
        "time_bank_left_ms": left,
    }
    assert timing["median_ms"] == statistics.median(d["latency_ms"] for d in decisions)
    assert timing["median_ms"] < ROOMY_LIMIT_MS  # the median decision is one of the fast ones
    assert outcome.seats[0].to_dict()["timing"] == timing


def test_a_bank_of_zero_cuts_every_call_at_the_limit_plus_the_grace() -> None:
    limits = Limits(
        time_limit_ms=LIMIT_MS, time_bank_ms=0, grace_ms=GRACE_MS, max_faults_per_match=2
    )
    outcome, requests = _play(slow_bot(EXTRA_S), limits)
    decisions = _decisions(outcome)

    assert [d["fault"] for d in decisions[:2]] == ["timeout", "timeout"]
    assert [r["time_bank_ms"] for r in requests if r["type"] in ("bid", "play")] == [0, 0]
    assert all(d["time_bank_ms"] == 0 for d in decisions)


def test_a_call_lost_to_the_platforms_network_draws_nothing_from_the_bank() -> None:
    # The bot's second decision arrives as the worker's network goes down for 5 s: the call is
    # cut at its limit plus the bank plus the grace (at most 3.2 s), the check finds the
    # broker down, and the question is asked again once it is back, with the same bank.
    limits = Limits(
        time_limit_ms=ROOMY_LIMIT_MS, time_bank_ms=1000, grace_ms=200, max_faults_per_match=4
    )
    with Broker() as broker:
        outage = Outage(broker, after_decisions=[2], lasting_s=5.0)
        outcome, requests = _play(outage.bot, limits, broker.check())
    asked = [r for r in requests if r["type"] in ("bid", "play")]
    decisions = _decisions(outcome)

    assert outage.started, "the network went down mid-match"
    assert [d["fault"] for d in decisions] == [None] * len(decisions)
    assert len(asked) == len(decisions) + 1  # the lost call, then the same question again
    assert asked[1]["legal"] == asked[2]["legal"] and asked[1]["hand"] == asked[2]["hand"]
    assert {r["time_bank_ms"] for r in asked} == {1000}
    assert {d["time_bank_ms"] for d in decisions} == {1000}
    assert outcome.seats[0].to_dict()["timing"]["decisions"] == len(decisions)


@pytest.mark.parametrize(
    ("latency_ms", "drawn"),
    [(199.0, 0), (200.0, 0), (200.01, 1), (201.0, 1), (450.2, 251), (5000.0, 300)],
)
def test_the_charge_rounds_the_excess_up_and_never_takes_more_than_is_left(
    latency_ms: float, drawn: int
) -> None:
    bank = TimeBank(300)
    assert bank.charge(200, latency_ms) == drawn
    assert bank.left_ms == 300 - drawn
    assert bank.allowed_ms(200) == 500 - drawn


def test_the_checker_charges_its_samples_to_one_bank_and_shows_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with BotTable([(HOST, slow_bot(0.5, slow_decisions=1))]) as table:
        report = asyncio.run(
            check_bot(
                table.urls[0],
                "",
                samples=3,
                seed=1,
                time_limit_ms=ROOMY_LIMIT_MS,
                time_bank_ms=BANK_MS,
                policy=LOOPBACK,
            )
        )
        asked = [r for r in table.requests(0) if r["type"] in ("bid", "play")]
        code = main(
            [
                "check",
                table.urls[0],
                "--samples",
                "2",
                "--time-limit-ms",
                str(ROOMY_LIMIT_MS),
                "--time-bank-ms",
                "1500",
            ]
        )

    bank = report.bank
    assert len(bank.latencies_ms) == 3
    assert bank.over_limit == 1
    first_limit = asked[0]["time_limit_ms"]
    assert bank.used_ms == math.ceil(bank.latencies_ms[0] - first_limit)
    assert bank.used_ms >= 500
    assert [r["time_bank_ms"] for r in asked] == [BANK_MS, bank.left_ms, bank.left_ms]
    assert any("time bank" in reason for reason in report.reasons())
    out = capsys.readouterr().out
    assert code == 1  # the bot signs nothing, so it fails the signing probes
    assert "bank:     " in out
    assert "of 1500 ms used" in out
    assert "answers over the time limit" in out
