"""The worker's own network failing mid-match is not charged to the bots; bots failing are.

The arena's network check connects to a ``Broker``, a TCP listener the test takes down and
brings back; no bot has a say in it. Bots sit on two loopback hosts (127.0.0.1, 127.0.0.2).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

import pytest

from arena.faults import ArenaNetworkError
from arena.limits import Limits
from arena.match import MatchOutcome, play_match
from arena.netcheck import NetworkCheck
from arena.netpolicy import NetworkPolicy
from arena.seats import HttpSeat, LocalSeat
from arena.transport import BotClient
from engine.players import make_player
from engine.presets import preset
from tests.support.hostile_bots import (
    BotTable,
    Broker,
    Handler,
    Outage,
    Received,
    fast,
    polite_answer,
    reply_json,
    sleeps_forever,
)

ONE, TWO = "127.0.0.1", "127.0.0.2"
# Five deals (3, 2, 1, 2, 3 cards): 44 decisions between four players.
MEDIUM = preset("oh-hell", max_cards=3, order="down_up", first_dealer="random")
CLOSED = preset("british-oh-hell", bidding="closed", max_cards=3, order="down_up")
# Roomy, so that a loaded machine does not fault the bots that answer.
LIMITS = Limits(time_limit_ms=300, grace_ms=200, max_faults_per_match=4)
LOOPBACK = NetworkPolicy(allow_loopback=True)


async def _match(
    urls: Sequence[str],
    *,
    network_check: NetworkCheck | None,
    limits: Limits = LIMITS,
    variant: Any = MEDIUM,
    seed: int = 7,
    locals_: int = 0,
) -> MatchOutcome:
    async with BotClient(limits=limits, policy=LOOPBACK) as client:
        seats: list[Any] = [HttpSeat(client, url, "s3cret", label=url) for url in urls]
        seats += [LocalSeat(make_player("heuristic", i), label=f"h{i}") for i in range(locals_)]
        return await play_match(
            variant=variant,
            seed=seed,
            seats=seats,
            limits=limits,
            match_id=f"outage-{seed}",
            network_check=network_check,
        )


def _decisions_of(outcome: MatchOutcome, seat: int) -> list[dict[str, Any]]:
    return [d for d in outcome.replay["decisions"] if d["seat"] == seat]


def _asked(table: BotTable, bot: int, kind: str = "decision") -> int:
    kinds = ("bid", "play") if kind == "decision" else (kind,)
    return sum(r["type"] in kinds for r in table.requests(bot))


@pytest.mark.parametrize(
    ("variant", "after"),
    [(MEDIUM, 9), (CLOSED, 2)],
    ids=["bids-in-turn", "closed-bidding"],
)
def test_an_outage_of_the_platforms_network_charges_no_one(variant: Any, after: int) -> None:
    with Broker() as broker:
        outage = Outage(broker, after_decisions=[after], lasting_s=2.5)
        with BotTable(
            [(ONE, outage.bot), (TWO, outage.bot), (ONE, outage.bot), (TWO, outage.bot)]
        ) as t:
            outcome = asyncio.run(_match(t.urls, variant=variant, network_check=broker.check()))
            decision_requests = [_asked(t, s) for s in range(4)]
            hellos = [_asked(t, s, "hello") for s in range(4)]
    assert outage.started, "the bots went silent mid-match"
    assert outcome.replay["finished"] is True
    assert {seat.seat: dict(seat.stats.faults) for seat in outcome.seats} == {
        s: {} for s in range(4)
    }
    assert [d for d in outcome.replay["decisions"] if d["fallback"]] == []
    assert hellos == [0, 0, 0, 0]  # the bots are never asked about the arena's network
    decisions = sum(d["hand_size"] + 1 for d in outcome.replay["deals"]) * len(outcome.seats)
    assert len(outcome.replay["decisions"]) == decisions  # a decision asked again is one record
    assert sum(decision_requests) > decisions  # the questions lost in the outage were asked again
    # One outage: each seat had at most one question in flight, asked again at most once.
    assert sum(decision_requests) <= decisions + (4 if variant is CLOSED else 1)
    for seat in outcome.seats:
        assert seat.stats.fault_count == 0 and not seat.stats.disqualified
        mine = _decisions_of(outcome, seat.seat)
        assert all(d["latency_ms"] is not None for d in mine)
        assert seat.stats.calls == len(mine)  # lost calls do not count as answered


def test_without_a_network_check_every_timeout_is_charged_at_once() -> None:
    with Broker() as broker:
        outage = Outage(broker, after_decisions=[9], lasting_s=2.5)
        with BotTable(
            [(ONE, outage.bot), (TWO, outage.bot), (ONE, outage.bot), (TWO, outage.bot)]
        ) as t:
            outcome = asyncio.run(_match(t.urls, network_check=None))
            decision_requests = sum(_asked(t, s) for s in range(4))
    assert outcome.replay["finished"] is True
    charged = [d for d in outcome.replay["decisions"] if d["fault"] == "timeout"]
    assert charged, "the calls lost in the outage were charged"
    asked = [d for d in outcome.replay["decisions"] if d["fault"] != "disqualified"]
    assert decision_requests == len(asked)  # nothing was asked twice


def test_a_bot_silent_all_match_is_charged_and_disqualified_as_before() -> None:
    bots: list[tuple[str, Handler]] = [(TWO, sleeps_forever), (ONE, fast), (TWO, fast), (ONE, fast)]
    with Broker() as broker, BotTable(bots) as t:
        outcome = asyncio.run(_match(t.urls, network_check=broker.check()))
        hellos = [_asked(t, s, "hello") for s in range(4)]
        silent_asked = _asked(t, 0)
    silent, *others = outcome.seats
    assert outcome.replay["finished"] is True
    assert set(silent.stats.faults) == {"timeout"}
    assert silent.stats.fault_count == LIMITS.max_faults_per_match == silent_asked
    assert silent.stats.disqualified is True and silent.rating_rank == 4
    assert hellos == [0, 0, 0, 0]
    for seat in others:
        assert seat.stats.fault_count == 0 and seat.rating_rank <= 3
        assert seat.stats.calls == len(_decisions_of(outcome, seat.seat))


def test_a_decision_is_asked_again_once_per_outage_the_check_confirmed() -> None:
    # The broker is down for the silent bot's first timeout: nothing is charged, and once it is
    # back the question is asked again; that timeout, and every later one, is charged.
    bots: list[tuple[str, Handler]] = [(ONE, sleeps_forever), (TWO, fast)]
    with Broker() as broker, BotTable(bots) as t:
        broker.down_for(2.5)
        outcome = asyncio.run(_match(t.urls, network_check=broker.check(), locals_=2))
        silent_asked = _asked(t, 0)
    silent = outcome.seats[0]
    assert outcome.replay["finished"] is True
    assert silent.stats.faults.keys() == {"timeout"}
    assert silent.stats.fault_count == LIMITS.max_faults_per_match
    assert silent_asked == LIMITS.max_faults_per_match + 1  # the one question asked again
    assert outcome.duration_s >= 2.0  # the match waited for the broker


def test_a_network_down_for_good_fails_the_match_on_the_platform_side_within_the_bound() -> None:
    limits = Limits(time_limit_ms=300, grace_ms=200, max_faults_per_match=4, outage_wait_s=2.0)
    bots: list[tuple[str, Handler]] = [(ONE, sleeps_forever), (TWO, sleeps_forever)]
    with Broker() as broker, BotTable(bots) as t:
        broker.down_for(3600)
        started = time.monotonic()
        with pytest.raises(ArenaNetworkError, match="network is down"):
            asyncio.run(_match(t.urls, network_check=broker.check(), limits=limits, locals_=2))
        elapsed = time.monotonic() - started
        decisions = [_asked(t, s) for s in range(2)]
    # One bid call, one check, then the wait: a few seconds past the bound at most.
    assert limits.outage_wait_s <= elapsed < limits.outage_wait_s + 10
    assert sum(decisions) == 1  # nothing else was asked while the network was down


def test_the_outage_a_match_may_wait_is_capped_over_the_whole_match() -> None:
    # Two outages of 6 s each: either alone fits in the 8.5 s a match may wait, both do not. An
    # outage counts from the first failed check (after the lost call's 0.5 s) to the first check
    # that passes (checks come about a second apart), so one counts about 5 to 6 s, and a loaded
    # machine may move either end by a second without the test changing its answer.
    limits = Limits(time_limit_ms=300, grace_ms=200, max_faults_per_match=4, outage_wait_s=8.5)
    with Broker() as broker:
        outage = Outage(broker, after_decisions=[5, 25], lasting_s=6.0)
        with BotTable(
            [(ONE, outage.bot), (TWO, outage.bot), (ONE, outage.bot), (TWO, outage.bot)]
        ) as t:
            started = time.monotonic()
            with pytest.raises(ArenaNetworkError, match=r"in all, past the 8\.5 s"):
                asyncio.run(_match(t.urls, network_check=broker.check(), limits=limits))
            elapsed = time.monotonic() - started
    assert len(outage.started) == 2, "the match lived through the first outage"
    assert elapsed >= limits.outage_wait_s


# -- bots cannot excuse their own faults -------------------------------------------------------


def _once_slow() -> Handler:
    """Answer politely, except the second decision: say nothing for 2 s."""
    decisions = 0

    async def handler(req: Received, writer: asyncio.StreamWriter) -> bool:
        nonlocal decisions
        request = json.loads(req.body)
        if request["type"] in ("bid", "play"):
            decisions += 1
            if decisions == 2:
                await asyncio.sleep(2)
                return False
        return reply_json(writer, polite_answer(request))

    return handler


def _slow_to_hello(every: int) -> Handler:
    """Answer decisions politely; leave ``hello`` unanswered but for one in ``every``."""
    hellos = 0

    async def handler(req: Received, writer: asyncio.StreamWriter) -> bool:
        nonlocal hellos
        request = json.loads(req.body)
        if request["type"] == "hello":
            hellos += 1
            if hellos % every:
                await asyncio.sleep(30)
                return False
        return reply_json(writer, polite_answer(request))

    return handler


def _times_out_every_first_ask() -> Handler:
    """Say nothing the first time each question comes; answer it when it is asked again."""
    seen: set[bytes] = set()

    async def handler(req: Received, writer: asyncio.StreamWriter) -> bool:
        request = json.loads(req.body)
        # A question asked again comes with the same body.
        if request["type"] in ("bid", "play") and req.body not in seen:
            seen.add(req.body)
            await asyncio.sleep(5)
            return False
        return reply_json(writer, polite_answer(request))

    return handler


def test_a_bot_alone_on_its_host_cannot_void_a_match_by_ignoring_hello() -> None:
    # Honest bots share one host; the hostile one is the only bot on another. An honest bot's
    # one timeout is its own, charged as such, and the match is played to the end.
    limits = Limits(time_limit_ms=300, grace_ms=200, max_faults_per_match=4, outage_wait_s=3.0)
    bots: list[tuple[str, Handler]] = [
        (ONE, _once_slow()),
        (ONE, fast),
        (ONE, fast),
        (TWO, _slow_to_hello(every=10**6)),
    ]
    with Broker() as broker, BotTable(bots) as t:
        outcome = asyncio.run(_match(t.urls, network_check=broker.check(), limits=limits))
    assert outcome.replay["finished"] is True
    assert dict(outcome.seats[0].stats.faults).keys() == {"timeout"}
    assert outcome.seats[0].stats.fault_count == 1
    assert [s.stats.fault_count for s in outcome.seats[1:]] == [0, 0, 0]


def test_colluding_bots_cannot_excuse_timeouts_and_stretch_a_match() -> None:
    # A bot times out the first time each question comes, and its colluder, alone on the other
    # host, leaves most hellos unanswered: every timeout is charged at once all the same.
    limits = Limits(time_limit_ms=300, grace_ms=200, max_faults_per_match=4, outage_wait_s=3.0)
    bots: list[tuple[str, Handler]] = [
        (ONE, _times_out_every_first_ask()),
        (ONE, fast),
        (ONE, fast),
        (TWO, _slow_to_hello(every=3)),
    ]
    with Broker() as broker, BotTable(bots) as t:
        outcome = asyncio.run(_match(t.urls, network_check=broker.check(), limits=limits))
        stalling_asked = _asked(t, 0)
    stalling = outcome.seats[0]
    assert outcome.replay["finished"] is True
    assert dict(stalling.stats.faults).keys() == {"timeout"}
    assert stalling.stats.fault_count == limits.max_faults_per_match
    assert stalling.stats.disqualified is True and stalling.rating_rank == 4
    assert stalling_asked == limits.max_faults_per_match  # no question was asked twice
    assert outcome.duration_s < 15  # four timeouts of at most 0.8 s, then quick bots
