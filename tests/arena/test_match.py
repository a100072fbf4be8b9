"""Matches through the arena: hostile bots contained, fallbacks played, nothing leaked."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import jsonschema
import orjson
import pytest

from arena.limits import Limits
from arena.match import MatchRunner, Seat, play_match
from arena.netpolicy import NetworkPolicy
from arena.protocol import fallback_bid, fallback_card
from arena.schemagen import SCHEMA_DIR
from arena.seats import HttpSeat, LocalSeat
from arena.transport import BotClient, CallResult
from engine.game import Game
from engine.players import make_player
from engine.presets import PRESETS, preset
from engine.replay import verify_replay
from engine.variant import Variant

SHORT = preset("oh-hell", max_cards=3, order="down", first_dealer="random")
# Five deals (3, 2, 1, 2, 3 cards): enough bids and plays for a bot to pass the fault threshold.
MEDIUM = preset("oh-hell", max_cards=3, order="down_up", first_dealer="random")
LIMITS = Limits(time_limit_ms=150, grace_ms=100, max_faults_per_match=4)
# For bots that never answer in time, short limits: the cut, not the bot, sets the test's pace.
SHORT_LIMITS = Limits(time_limit_ms=40, grace_ms=40, max_faults_per_match=4)
LOOPBACK = NetworkPolicy(allow_loopback=True)
CARD_BYTES = re.compile(rb"\b[23456789TJQKA][CDHS]\b")

# behaviour -> the fault kind its answers are recorded as
HOSTILE = {
    "sleeps_forever": "timeout",
    "trickles": "timeout",
    "fifty_megabytes": "oversize",
    "not_json": "not_json",
    "json_list": "wrong_shape",
    "bid_three": "wrong_shape",
    "server_error": "http_status",
    "redirects": "redirect",
    "resets": "connection_error",
}

# behaviour -> the fault kind of its answers: valid JSON, but a wrong decision
WRONG_DECISIONS = {
    "plays_illegal_card": "illegal_action",
    "plays_card_not_held": "illegal_action",
    "plays_not_a_card": "illegal_action",
    "omits_card": "wrong_shape",
    "bids_too_high": "illegal_action",
    "bids_negative": "illegal_action",
    "bids_true": "wrong_shape",
}


def _heuristics(count: int) -> list[LocalSeat]:
    return [LocalSeat(make_player("heuristic", i), label=f"h{i}") for i in range(count)]


async def _match_with(
    url: str,
    *,
    seed: int = 3,
    variant: Any = SHORT,
    match_id: str = "m-hostile",
    limits: Limits = LIMITS,
) -> Any:
    async with BotClient(limits=limits, policy=LOOPBACK) as client:
        seats: list[Seat] = [HttpSeat(client, url, "s3cret", label="hostile"), *_heuristics(3)]
        return await play_match(
            variant=variant, seed=seed, seats=seats, limits=limits, match_id=match_id
        )


def _decisions(replay: dict[str, Any]) -> Iterator[tuple[int, str, tuple[Any, ...], Any]]:
    """Re-play a replay, giving (seat, "bid" or "play", the legal actions, the action taken)."""
    game = Game(Variant.from_dict(replay["variant"]), replay["players"], replay["seed"])
    for deal in replay["deals"]:
        while game.phase == "bid":
            seat = game.acting_seat
            yield seat, "bid", game.legal_bids(), deal["bids"][seat]
            game.bid(deal["bids"][seat])
        for trick in deal["tricks"]:
            for card in trick["cards"]:
                yield game.acting_seat, "play", game.legal_cards(), card
                game.play(card)


@pytest.mark.parametrize("behaviour", sorted(HOSTILE))
def test_a_hostile_bot_is_contained_and_the_match_completes(
    hostile_bots: Any, behaviour: str
) -> None:
    kind = HOSTILE[behaviour]
    limits = SHORT_LIMITS if kind == "timeout" else LIMITS
    outcome = asyncio.run(_match_with(hostile_bots[behaviour], limits=limits))
    hostile, *others = outcome.seats
    assert outcome.replay["finished"] is True
    assert set(hostile.stats.faults) == {kind}
    assert hostile.stats.fault_count == limits.max_faults_per_match
    assert hostile.stats.disqualified is True
    assert hostile.rating_rank == 4
    sample = hostile.stats.faults[kind]
    cut_ms = limits.time_limit_for("bid") + limits.grace_ms
    assert sample.latency_ms is not None and sample.latency_ms < cut_ms + 250
    for seat in others:
        assert seat.stats.fault_count == 0
        assert not seat.stats.disqualified
        assert seat.rating_rank <= 3


@pytest.mark.parametrize("behaviour", sorted(WRONG_DECISIONS))
def test_a_bot_answering_wrong_decisions_gets_the_fallback_and_is_disqualified(
    hostile_bots: Any, behaviour: str
) -> None:
    outcome = asyncio.run(_match_with(hostile_bots[behaviour], variant=MEDIUM))
    hostile, *others = outcome.seats
    kind = WRONG_DECISIONS[behaviour]
    assert outcome.replay["finished"] is True
    assert set(hostile.stats.faults) == {kind}
    assert hostile.stats.fault_count == LIMITS.max_faults_per_match
    assert hostile.stats.disqualified is True
    assert hostile.rating_rank == 4
    stat = hostile.stats.faults[kind]
    assert stat.count == LIMITS.max_faults_per_match
    assert stat.sample and stat.detail
    assert stat.latency_ms is not None and 0 <= stat.latency_ms < LIMITS.time_limit_for("bid")
    for seat in others:
        assert seat.stats.fault_count == 0
        assert seat.rating_rank <= 3
    faulty = "bid" if behaviour.startswith("bids") else "play"
    fallback = fallback_bid if faulty == "bid" else fallback_card
    taken = [
        (legal, action)
        for s, k, legal, action in _decisions(outcome.replay)
        if (s, k) == (0, faulty)
    ]
    assert taken and all(action == fallback(legal) for legal, action in taken)


def test_a_bot_under_the_fault_threshold_stays_in_and_its_legal_answers_count(
    hostile_bots: Any,
) -> None:
    match_id = f"m-{uuid.uuid4().hex}"  # the bot faults on the first two decisions of a match
    outcome = asyncio.run(
        _match_with(hostile_bots["faults_twice"], variant=MEDIUM, seed=11, match_id=match_id)
    )
    bot = outcome.seats[0]
    mine = [(k, legal, action) for s, k, legal, action in _decisions(outcome.replay) if s == 0]
    assert bot.stats.fault_count == 2 < LIMITS.max_faults_per_match
    assert set(bot.stats.faults) == {"illegal_action"}
    assert bot.stats.faults["illegal_action"].sample == '{"bid": 99}'  # JSON, as the bot sent it
    assert bot.stats.disqualified is False
    assert bot.stats.calls == len(mine)
    assert bot.rating_rank == bot.rank
    (bid_kind, bid_legal, bid), (play_kind, play_legal, card) = mine[:2]
    assert (bid_kind, bid) == ("bid", fallback_bid(bid_legal))
    assert (play_kind, card) == ("play", fallback_card(play_legal))
    assert all(action == legal[0] for _, legal, action in mine[2:])
    # The replay records each decision: the two fallbacks with their fault, and every latency.
    recorded = [d for d in outcome.replay["decisions"] if d["seat"] == 0]
    assert len(recorded) == len(mine)
    assert [(d["type"], d["fallback"], d["fault"]) for d in recorded[:2]] == [
        ("bid", True, "illegal_action"),
        ("play", True, "illegal_action"),
    ]
    assert recorded[1]["deal"] == 1 and recorded[1]["trick"] == 1
    assert not any(d["fallback"] for d in recorded[2:])
    assert all(d["latency_ms"] is not None and d["latency_ms"] >= 0 for d in recorded)
    assert verify_replay(outcome.replay)["finished"] is True  # the extra key does not disturb it


def test_a_well_behaved_bot_has_no_faults_and_is_called_for_every_decision(
    hostile_bots: Any,
) -> None:
    outcome = asyncio.run(_match_with(hostile_bots["fast"]))
    fast = outcome.seats[0]
    decisions = sum(d["hand_size"] + 1 for d in outcome.replay["deals"])
    assert fast.stats.fault_count == 0
    assert fast.stats.calls == decisions
    requests = [json.loads(r.body) for r in hostile_bots.received["fast"]]
    assert requests[-1]["type"] == "result"


class Recorder:
    """A player that answers at random among the legal actions and keeps every request."""

    def __init__(self, seed: int) -> None:
        self.inner = make_player("random", seed)
        self.sent: list[bytes] = []

    @property
    def seen(self) -> list[dict[str, Any]]:
        """Every request as it was sent, decoded afresh."""
        return [orjson.loads(raw) for raw in self.sent]

    def bid(self, obs: dict[str, Any], legal: tuple[int, ...]) -> int:
        self.sent.append(orjson.dumps(obs))
        return self.inner.bid(obs, legal)

    def play(self, obs: dict[str, Any], legal: tuple[str, ...]) -> str:
        self.sent.append(orjson.dumps(obs))
        return self.inner.play(obs, legal)


def _allowed_cards(message: dict[str, Any]) -> set[str]:
    allowed = set(message["hand"])
    if message["trump_card"]:
        allowed.add(message["trump_card"])
    for trick in message["tricks"]:
        allowed.update(trick["cards"])
    if message["trick"]:
        allowed.update(message["trick"]["cards"])
    return allowed


def _play_recorded(name: str, players: int, seed: int) -> tuple[MatchRunner, list[Recorder]]:
    variant = PRESETS[name]
    recorders = [Recorder(seed + s) for s in range(players)]
    seats = [LocalSeat(r, label=f"r{s}") for s, r in enumerate(recorders)]
    runner = MatchRunner(
        variant=variant, seed=seed, seats=seats, limits=LIMITS, match_id=f"leak-{seed}"
    )
    asyncio.run(runner.run())
    return runner, recorders


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_recording_bot_never_sees_a_card_it_may_not_know(name: str) -> None:
    variant = PRESETS[name]
    for players in (variant.min_players, variant.max_players):
        for seed in range(3):
            runner, recorders = _play_recorded(name, players, seed)
            replay = runner.game.replay()
            for seat, recorder in enumerate(recorders):
                assert recorder.sent, "every seat is asked to act"
                for raw in recorder.sent:
                    message = orjson.loads(raw)
                    deal = replay["deals"][message["deal"] - 1]
                    assert set(message["hand"]) <= set(deal["hands"][seat])
                    found = {card.decode() for card in CARD_BYTES.findall(raw)}
                    assert found <= _allowed_cards(message), (name, players, seat, message)


def test_closed_bidding_asks_every_seat_before_showing_any_bid() -> None:
    variant = preset("british-oh-hell", bidding="closed")
    recorders = [Recorder(s) for s in range(3)]
    seats = [LocalSeat(r, label=f"r{s}") for s, r in enumerate(recorders)]
    runner = MatchRunner(variant=variant, seed=5, seats=seats, limits=LIMITS, match_id="c")
    asyncio.run(runner.run())
    for seat, recorder in enumerate(recorders):
        bid_requests = [m for m in recorder.seen if m["phase"] == "bid"]
        assert bid_requests
        for message in bid_requests:
            assert message["to_act"] == seat
            assert all(b is None for b in message["bids"])


def _validators() -> dict[str, jsonschema.Draft202012Validator]:
    out = {}
    for path in SCHEMA_DIR.glob("*.json"):
        schema = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        out[path.stem] = jsonschema.Draft202012Validator(schema)
    return out


def test_every_request_sent_over_http_validates_against_its_schema(hostile_bots: Any) -> None:
    before = len(hostile_bots.received["fast"])
    asyncio.run(_match_with(hostile_bots["fast"], variant=preset("la-podrida"), seed=9))

    async def hello() -> None:
        async with BotClient(limits=LIMITS, policy=LOOPBACK) as client:
            await client.hello(hostile_bots["fast"], "s3cret")

    asyncio.run(hello())
    validators = _validators()
    kinds = set()
    for received in hostile_bots.received["fast"][before:]:
        message = json.loads(received.body)
        kinds.add(message["type"])
        validators[f"{message['type']}.request"].validate(message)
    assert kinds == {"bid", "play", "result", "hello"}


def test_the_committed_schemas_match_the_code() -> None:
    from arena.schemagen import render, schemas

    for name, schema in schemas().items():
        assert (SCHEMA_DIR / name).read_text() == render(schema), f"regenerate {name}"


def test_fallbacks_are_the_lowest_bid_and_the_lowest_card() -> None:
    assert fallback_bid((1, 2, 3)) == 1
    assert fallback_card(("AS", "2H", "2C", "KD")) == "2C"


class Dawdler:
    """A legal seat that takes ``delay_s`` over every decision (a heuristic player's answer)."""

    def __init__(self, seat: int, delay_s: float) -> None:
        self.inner = LocalSeat(make_player("heuristic", seat), label=f"dawdler{seat}")
        self.label = self.inner.label
        self.delay_s = delay_s
        self.calls = 0

    async def call(self, message: dict[str, Any], time_limit_ms: int) -> CallResult:
        self.calls += 1
        await asyncio.sleep(self.delay_s)
        result = await self.inner.call(message, time_limit_ms)
        return CallResult(result.data, result.latency_ms + self.delay_s * 1000)


def test_past_the_cap_on_a_matchs_duration_the_slowest_seat_plays_fallbacks_and_others_go_on() -> (
    None
):
    slow = Dawdler(0, 0.05)
    seats: list[Seat] = [slow, *_heuristics(3)]
    limits = Limits(time_limit_ms=1000, max_faults_per_match=4, max_match_s=0.3)
    outcome = asyncio.run(
        play_match(variant=MEDIUM, seed=5, seats=seats, limits=limits, match_id="m-capped")
    )
    cut = outcome.seats[0].stats
    assert cut.faults["match_time"].count >= 1 and cut.disqualified
    assert "cap of 0.3 s" in cut.faults["match_time"].detail
    assert all(s.stats.fault_count == 0 for s in outcome.seats[1:])
    decisions = outcome.replay["decisions"]
    slow_decisions = [d for d in decisions if d["seat"] == 0]
    assert slow.calls < len(slow_decisions)  # its last decisions were played without a call
    assert slow_decisions[-1]["fallback"] is True
    verify_replay(outcome.replay)  # the fallbacks are legal moves: the replay plays back


def test_without_a_cap_a_slow_but_legal_seat_plays_every_decision() -> None:
    slow = Dawdler(0, 0.01)
    seats: list[Seat] = [slow, *_heuristics(3)]
    outcome = asyncio.run(
        play_match(variant=SHORT, seed=5, seats=seats, limits=LIMITS, match_id="m-uncapped")
    )
    assert outcome.seats[0].stats.fault_count == 0
    decisions = [d for d in outcome.replay["decisions"] if d["seat"] == 0]
    assert slow.calls == len(decisions) + 1  # every decision, then the result
