"""Replays: JSON round trip, re-play to the same result, tampering caught, golden records.

Golden replays under ``golden/`` were made once with ``python -m tests.engine.test_replay`` and
checked by hand; any change to shuffling, dealing, trump or scoring makes them fail.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from engine import Game, InvalidReplayError, preset, replay_game, verify_replay
from tests.support.engine import play_random, random_game

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_GAMES = [
    ("oh-hell", {}, 4, 20240601),
    ("oh-well", {}, 5, 7),
    ("la-podrida", {}, 3, 99),
    ("british-oh-hell", {"bidding": "closed"}, 4, 12345),
    ("nomination-whist", {}, 6, 2**62 + 1),
    ("ascending-blackout", {"trump": "fixed", "trump_cycle": "CDHSN"}, 5, 0),
]


def golden_path(name: str, players: int) -> Path:
    return GOLDEN / f"{name}-{players}p.json"


def finished_replay(seed: int = 5) -> dict[str, Any]:
    return json.loads(json.dumps(random_game(preset("oh-hell"), 4, seed).replay()))


@pytest.mark.parametrize(("name", "options", "players", "seed"), GOLDEN_GAMES)
def test_a_golden_replay_still_plays_out_identically(
    name: str, options: dict, players: int, seed: int
) -> None:
    data = json.loads(golden_path(name, players).read_text())
    assert (data["seed"], data["players"], data["variant"]["name"]) == (seed, players, name)
    assert data["variant"] == preset(name, **options).to_dict()
    game = replay_game(data)
    assert game.is_over
    assert game.replay() == data


def test_a_replay_round_trips_through_json_and_replays_to_the_same_scores() -> None:
    game = random_game(preset("oh-hell"), 5, seed=8)
    data = json.loads(json.dumps(game.replay()))
    again = replay_game(data)
    assert again.totals == game.totals
    assert again.ranks() == game.ranks()
    assert [d.scores for d in again.deals] == [d.scores for d in game.deals]
    assert verify_replay(data) == {
        "deals": 19,
        "finished": True,
        "totals": game.totals,
        "seed_committed": False,
    }


def test_an_unfinished_game_replays_up_to_where_it_stopped() -> None:
    for steps in (0, 2, 4, 7, 60):
        game = Game(preset("oh-hell"), 4, seed=3)
        rng = random.Random(3)
        for _ in range(steps):
            actions = game.legal_actions()
            game.apply(actions[rng.randrange(len(actions))])
        data = json.loads(json.dumps(game.replay()))
        again = replay_game(data)
        assert again.replay() == game.replay()
        assert again.trick == game.trick
        assert (again.phase, again.to_act) == (game.phase, game.to_act)


def test_the_replay_holds_what_the_issue_lists() -> None:
    data = finished_replay()
    assert data["format"] == "ohhell-replay/1"
    assert {"variant", "players", "seed", "first_dealer", "deals", "totals", "ranks"} <= set(data)
    deal = data["deals"][0]
    assert set(deal) == {
        "number",
        "dealer",
        "hand_size",
        "hands",
        "trump",
        "trump_card",
        "bids",
        "tricks",
        "tricks_won",
        "scores",
    }
    assert set(deal["tricks"][0]) == {"leader", "cards", "winner"}


def tamper(edit: Any) -> dict[str, Any]:
    data = finished_replay()
    edit(data)
    return data


def _first_made_bid(data: dict[str, Any]) -> tuple[int, int]:
    for d, deal in enumerate(data["deals"]):
        for seat, (bid, won) in enumerate(zip(deal["bids"], deal["tricks_won"], strict=True)):
            if bid == won and seat != deal["dealer"]:
                return d, seat
    raise AssertionError("nobody made a bid")


def _change_bid(data: dict[str, Any]) -> None:
    d, seat = _first_made_bid(data)
    deal = data["deals"][d]
    deal["bids"][seat] = deal["bids"][seat] + 1 if deal["bids"][seat] == 0 else 0


def _change_card(data: dict[str, Any]) -> None:
    trick = data["deals"][0]["tricks"][0]
    leader_hand = data["deals"][0]["hands"][trick["leader"]]
    trick["cards"][0] = next(c for c in leader_hand if c != trick["cards"][0])


def _swap_cards_within_a_trick(data: dict[str, Any]) -> None:
    cards = data["deals"][0]["tricks"][0]["cards"]
    cards[0], cards[1] = cards[1], cards[0]


def _change_winner(data: dict[str, Any]) -> None:
    trick = data["deals"][2]["tricks"][0]
    trick["winner"] = (trick["winner"] + 1) % 4


def _change_score(data: dict[str, Any]) -> None:
    data["deals"][3]["scores"][1] += 1


def _change_total(data: dict[str, Any]) -> None:
    data["totals"][0] += 10


def _change_seed(data: dict[str, Any]) -> None:
    data["seed"] += 1


def _change_tricks_won(data: dict[str, Any]) -> None:
    won = data["deals"][1]["tricks_won"]
    won[0], won[1] = won[0] + 1, won[1] - 1


def _change_bonus(data: dict[str, Any]) -> None:
    data["bonus"][0] = 10


def _change_first_dealer(data: dict[str, Any]) -> None:
    data["first_dealer"] = (data["first_dealer"] + 1) % 4


def _change_trump(data: dict[str, Any]) -> None:
    data["deals"][0]["trump"] = "S" if data["deals"][0]["trump"] != "S" else "H"


def _change_hand(data: dict[str, Any]) -> None:
    hands = data["deals"][0]["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]


def _merge_two_tricks(data: dict[str, Any]) -> None:
    tricks = data["deals"][0]["tricks"]
    tricks[0]["cards"] += tricks.pop(1)["cards"]


def _drop_a_deal(data: dict[str, Any]) -> None:
    data["deals"].pop()


def _claim_unfinished(data: dict[str, Any]) -> None:
    data["finished"] = False


def _change_format(data: dict[str, Any]) -> None:
    data["format"] = "ohhell-replay/0"


def _change_variant(data: dict[str, Any]) -> None:
    data["variant"]["hook"] = "maybe"


@pytest.mark.parametrize(
    "edit",
    [
        _change_bid,
        _change_card,
        _swap_cards_within_a_trick,
        _change_winner,
        _change_score,
        _change_total,
        _change_seed,
        _change_tricks_won,
        _change_bonus,
        _change_first_dealer,
        _change_trump,
        _change_hand,
        _merge_two_tricks,
        _drop_a_deal,
        _claim_unfinished,
        _change_format,
        _change_variant,
    ],
    ids=lambda f: f.__name__.lstrip("_"),
)
def test_a_tampered_replay_is_reported_invalid(edit: Any) -> None:
    with pytest.raises(InvalidReplayError):
        verify_replay(tamper(edit))


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        "replay",
        {"format": "ohhell-replay/1"},
        {"format": "ohhell-replay/1", "variant": {}, "players": 4},
    ],
)
def test_something_that_is_not_a_replay_is_reported_invalid(data: Any) -> None:
    with pytest.raises(InvalidReplayError):
        replay_game(data)


def test_an_untouched_copy_still_verifies() -> None:
    data = finished_replay()
    assert verify_replay(copy.deepcopy(data))["finished"] is True


def write_golden() -> None:
    """Play and write the golden replays (run once; review the files before committing)."""
    GOLDEN.mkdir(exist_ok=True)
    for name, options, players, seed in GOLDEN_GAMES:
        game = play_random(Game(preset(name, **options), players, seed), random.Random(seed))
        golden_path(name, players).write_text(json.dumps(game.replay(), indent=1) + "\n")


if __name__ == "__main__":
    write_golden()
