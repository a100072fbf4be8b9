"""The worker's own network failing mid-match is not charged to the bots; bots failing are.

Bots sit on two loopback hosts (127.0.0.1 and 127.0.0.2), so a match has distinct hosts to
probe when a call times out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest

from arena.faults import ArenaNetworkError
from arena.limits import Limits
from arena.match import MatchOutcome, play_match
from arena.netpolicy import NetworkPolicy
from arena.seats import HttpSeat, LocalSeat
from arena.transport import BotClient
from engine.players import make_player
from engine.presets import preset
from tests.arena.hostile_bots import BotTable, Handler, Outage, fast, not_json, sleeps_forever

ONE, TWO = "127.0.0.1", "127.0.0.2"
# Five deals (3, 2, 1, 2, 3 cards): 44 decisions between four players.
MEDIUM = preset("oh-hell", max_cards=3, order="down_up", first_dealer="random")
CLOSED = preset("british-oh-hell", bidding="closed", max_cards=3, order="down_up")
LIMITS = Limits(time_limit_ms=150, grace_ms=100, max_faults_per_match=4)
# Roomier, so that a loaded machine does not fault the bots answering around the outage; only
# fields every version of Limits has, so the outage test also runs against older code.
OUTAGE_LIMITS = Limits(time_limit_ms=300, grace_ms=200, max_faults_per_match=4)
LOOPBACK = NetworkPolicy(allow_loopback=True)


async def _match(
    urls: Sequence[str],
    *,
    limits: Limits = LIMITS,
    variant: Any = MEDIUM,
    seed: int = 7,
    locals_: int = 0,
) -> MatchOutcome:
    async with BotClient(limits=limits, policy=LOOPBACK) as client:
        seats: list[Any] = [HttpSeat(client, url, "s3cret", label=url) for url in urls]
        seats += [LocalSeat(make_player("heuristic", i), label=f"h{i}") for i in range(locals_)]
        return await play_match(
            variant=variant, seed=seed, seats=seats, limits=limits, match_id=f"outage-{seed}"
        )


def _decisions_of(outcome: MatchOutcome, seat: int) -> list[dict[str, Any]]:
    return [d for d in outcome.replay["decisions"] if d["seat"] == seat]


@pytest.mark.parametrize(
    ("variant", "after"),
    [(MEDIUM, 9), (CLOSED, 2)],
    ids=["bids-in-turn", "closed-bidding"],
)
def test_an_outage_of_every_bot_at_once_charges_no_one(variant: Any, after: int) -> None:
    outage = Outage(after_decisions=after, lasting_s=2.5)
    with BotTable(
        [(ONE, outage.bot), (TWO, outage.bot), (ONE, outage.bot), (TWO, outage.bot)]
    ) as t:
        outcome = asyncio.run(_match(t.urls, variant=variant, limits=OUTAGE_LIMITS))
        decision_requests = [
            sum(r["type"] in ("bid", "play") for r in t.requests(s)) for s in range(4)
        ]
    assert outage.started is not None, "the bots went silent mid-match"
    assert outcome.replay["finished"] is True
    assert {seat.seat: dict(seat.stats.faults) for seat in outcome.seats} == {
        s: {} for s in range(4)
    }
    assert [d for d in outcome.replay["decisions"] if d["fallback"]] == []
    assert outage.hellos_during > 0, "the arena probed the other hosts during the outage"
    decisions = sum(d["hand_size"] + 1 for d in outcome.replay["deals"]) * len(outcome.seats)
    assert len(outcome.replay["decisions"]) == decisions  # a decision asked again is one record
    assert sum(decision_requests) > decisions  # the questions lost in the outage were asked again
    for seat in outcome.seats:
        assert seat.stats.fault_count == 0 and not seat.stats.disqualified
        mine = _decisions_of(outcome, seat.seat)
        assert not any(d["fault"] for d in mine)
        assert all(d["latency_ms"] is not None for d in mine)
        assert seat.stats.calls == len(mine)  # neither probes nor lost calls count as answered


def test_a_bot_silent_all_match_is_charged_and_disqualified_as_before() -> None:
    bots: list[tuple[str, Handler]] = [(TWO, sleeps_forever), (ONE, fast), (TWO, fast), (ONE, fast)]
    with BotTable(bots) as t:
        outcome = asyncio.run(_match(t.urls))
        hellos = [sum(r["type"] == "hello" for r in t.requests(s)) for s in range(4)]
    silent, *others = outcome.seats
    assert outcome.replay["finished"] is True
    assert set(silent.stats.faults) == {"timeout"}
    assert silent.stats.fault_count == LIMITS.max_faults_per_match
    assert silent.stats.disqualified is True and silent.rating_rank == 4
    assert sum(hellos[1::2]) > 0, "the bots on the other host were probed"
    for seat in others:
        assert seat.stats.fault_count == 0 and seat.rating_rank <= 3
        assert seat.stats.calls == len(_decisions_of(outcome, seat.seat))


def test_two_bots_on_different_hosts_silent_all_match_are_both_charged() -> None:
    bots: list[tuple[str, Handler]] = [
        (ONE, sleeps_forever),
        (TWO, sleeps_forever),
        (ONE, fast),
        (TWO, fast),
    ]
    with BotTable(bots) as t:
        outcome = asyncio.run(_match(t.urls))
    assert outcome.replay["finished"] is True
    for seat in outcome.seats[:2]:
        assert set(seat.stats.faults) == {"timeout"}
        assert seat.stats.fault_count == LIMITS.max_faults_per_match
        assert seat.stats.disqualified is True and seat.rating_rank == 3  # shared last
    for seat in outcome.seats[2:]:
        assert seat.stats.fault_count == 0 and seat.rating_rank <= 2


def test_a_network_down_for_good_fails_the_match_on_the_platform_side_within_the_bound() -> None:
    limits = Limits(
        time_limit_ms=150,
        grace_ms=100,
        max_faults_per_match=4,
        probe_time_limit_ms=200,
        outage_wait_s=2.0,
    )
    bots: list[tuple[str, Handler]] = [(ONE, sleeps_forever), (TWO, sleeps_forever)]
    with BotTable(bots) as t:
        started = time.monotonic()
        with pytest.raises(ArenaNetworkError, match="network is down"):
            asyncio.run(_match(t.urls, limits=limits, locals_=2))
        elapsed = time.monotonic() - started
        decisions = [sum(r["type"] in ("bid", "play") for r in t.requests(s)) for s in range(2)]
    # One bid call, a probe round, then the wait: a few seconds past the bound at most.
    assert limits.outage_wait_s <= elapsed < limits.outage_wait_s + 10
    assert sum(decisions) == 1  # nothing else was asked while the network was down


def test_a_disqualified_bot_is_not_probed() -> None:
    # Every seat faults on its first decision; by seed 2 the bot answering junk acts before the
    # silent one, so when the silent one times out the only other host is already out.
    limits = Limits(time_limit_ms=150, grace_ms=100, max_faults_per_match=1)
    bots: list[tuple[str, Handler]] = [(ONE, sleeps_forever), (TWO, not_json)]
    with BotTable(bots) as t:
        outcome = asyncio.run(_match(t.urls, limits=limits, seed=2, locals_=2))
        junk_requests = t.requests(1)
    first_fault = [d["seat"] for d in outcome.replay["decisions"] if d["fault"]][:2]
    assert first_fault == [1, 0]
    assert outcome.seats[0].stats.faults.keys() == {"timeout"}
    assert outcome.seats[1].stats.faults.keys() == {"not_json"}
    assert [r["type"] for r in junk_requests] in (["bid"], ["play"])
