"""Requests built from kept-encoded parts say exactly what the whole observation says."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from arena.faults import BotNotJSONError, BotWrongShapeError
from arena.protocol import DecisionRequests, decision_message
from arena.transport import decode_answer
from arena.wire import PartlyEncoded, complete_message, encode_message
from engine.game import Game
from engine.observation import SHARED_GROUPS, SHARED_KEYS, observe, shared_group, shared_versions
from engine.presets import PRESETS


def _states(name: str, players: int, seed: int) -> Iterator[Game]:
    """Walk one random game of a preset, yielding the game before every action."""
    rng = random.Random(seed)
    game = Game(PRESETS[name], players, seed)
    while not game.is_over:
        yield game
        legal = game.legal_actions()
        game.apply(legal[rng.randrange(len(legal))])


def _cases() -> list[tuple[str, int]]:
    return [
        (name, players)
        for name, variant in PRESETS.items()
        for players in sorted({variant.min_players, variant.max_players})
    ]


@pytest.mark.parametrize(("name", "players"), _cases())
def test_every_request_body_holds_exactly_the_whole_observation(name: str, players: int) -> None:
    for seed in (3,):
        requests = None
        for game in _states(name, players, seed):
            if requests is None:
                requests = DecisionRequests(game, f"m-{seed}")
            kind = game.phase
            legal = game.legal_actions()
            for seat in range(players):
                to_act = seat if seat != game.to_act else None
                request = requests.build(kind, seat, legal, time_limit_ms=700, to_act=to_act)
                expected = decision_message(
                    kind, observe(game, seat), legal, match_id=f"m-{seed}", time_limit_ms=700
                )
                if to_act is not None:
                    expected["to_act"] = to_act
                body = encode_message(request)
                assert json.loads(body) == json.loads(encode_message(expected))
                assert complete_message(request) == json.loads(body)


@pytest.mark.parametrize(("name", "players"), _cases())
def test_the_shared_groups_change_only_with_their_versions(name: str, players: int) -> None:
    assert sorted(SHARED_KEYS) == sorted(key for group in SHARED_GROUPS for key in group)
    before: tuple[Any, ...] | None = None
    groups: list[dict[str, Any]] = []
    for game in _states(name, players, 7):
        versions = shared_versions(game)
        current = [shared_group(game, i) for i in range(len(SHARED_GROUPS))]
        for seat in range(players):
            own = observe(game, seat, shared=False)
            assert not own.keys() & set(SHARED_KEYS)
            whole = observe(game, seat)
            assert {**own, **{k: v for g in current for k, v in g.items()}} == whole
        if before is not None:
            for index, (version, old) in enumerate(zip(versions, before, strict=True)):
                if version == old:
                    assert current[index] == groups[index], (index, version)
        before, groups = versions, current


def test_a_partly_encoded_request_completes_to_fresh_values() -> None:
    request = PartlyEncoded({"type": "play"}, ('"a":[1,2]', '"b":{"c":null}'))
    assert encode_message(request) == b'{"a":[1,2],"b":{"c":null},"type":"play"}'
    complete = complete_message(request)
    assert complete == {"a": [1, 2], "b": {"c": None}, "type": "play"}
    complete["a"].append(3)
    assert complete_message(request)["a"] == [1, 2]
    assert encode_message(PartlyEncoded({}, ('"a":1',))) == b'{"a":1}'


@pytest.mark.parametrize(
    "body",
    [
        b'{"card":"2C"}',
        b' {"card":"2C"}',
        b'{"card":"2C"} \n',
        b'{"bid":1,"bid":2}',
        b'{"a":{"b":[1,2.5,true,null]}}',
        b"{}",
    ],
)
def test_answers_decode_as_the_standard_decoder_does(body: bytes) -> None:
    assert decode_answer(body, 1.0) == json.loads(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"card":"2C"}x',
        b'{"card":"2C"',
        b'{"bid":NaN}',
        b'{"bid":Infinity}',
        b"{'bid':1}",
        b'{"bid":1}{"bid":2}',
        b"\xff{}",
        b"",
    ],
)
def test_answers_that_are_not_json_are_refused(body: bytes) -> None:
    with pytest.raises(BotNotJSONError):
        decode_answer(body, 1.0)


def test_an_answer_that_is_not_an_object_is_the_wrong_shape() -> None:
    with pytest.raises(BotWrongShapeError):
        decode_answer(b'["2C"]', 1.0)
