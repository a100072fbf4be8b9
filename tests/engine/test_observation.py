"""What a seat may know (docs/rules.md section 4): its own hand and public facts, nothing hidden."""

from __future__ import annotations

import json
import random
import re

import pytest

from engine import Game, preset
from engine.errors import InvalidSeatError
from tests.support.engine import play_random

CARD = re.compile(r'"([2-9TJQKA][CDHS])"')


def cards_in(view: dict) -> set[str]:
    """Every card name anywhere in a JSON-ready view."""
    return set(CARD.findall(json.dumps(view)))


def test_an_observation_is_plain_json() -> None:
    game = Game(preset("oh-hell"), 4, seed=1)
    view = game.observation(0)
    assert json.loads(json.dumps(view)) == view


def test_a_seat_sees_its_own_hand_and_the_turned_card_only() -> None:
    game = Game(preset("oh-hell"), 4, seed=1)
    for seat in range(4):
        view = game.observation(seat)
        assert view["hand"] == list(game.hand(seat))
        assert cards_in(view) == set(game.hand(seat)) | {game.trump_card}


def test_an_observation_never_holds_the_seed_the_stock_or_other_hands() -> None:
    game = Game(preset("oh-well"), 5, seed=123456789)
    view = game.observation(2)
    assert "seed" not in json.dumps(view)
    assert "123456789" not in json.dumps(view)
    for seat in (0, 1, 3, 4):
        assert not set(game.hand(seat)) & cards_in(view) - {game.trump_card}


def test_the_observation_lists_the_public_facts() -> None:
    game = Game(preset("oh-hell"), 4, seed=1)
    play_random(game, random.Random(1), stop=lambda g: len(g.trick) == 2)
    view = game.observation(1)
    assert view["phase"] == "play"
    assert view["dealer"] == game.dealer
    assert view["eldest"] == (game.dealer + 1) % 4
    assert view["bids"] == game.bids
    assert view["trick"]["cards"] == game.trick
    assert view["hand_size"] == 10
    assert view["deals"] == 19
    assert view["schedule"] == list(game.schedule)
    assert view["variant"] == preset("oh-hell").to_dict()
    assert view["scores"] == [0, 0, 0, 0]


def test_played_cards_and_finished_deals_are_public() -> None:
    game = Game(preset("oh-hell"), 3, seed=2)
    play_random(game, random.Random(2), stop=lambda g: g.deal_number == 2 and g.phase == "play")
    view = game.observation(0)
    assert len(view["history"]) == 1
    assert view["history"][0]["scores"] == game.deals[0].scores
    assert view["tricks"] == []  # tricks of earlier deals are not repeated


def test_closed_bidding_hides_other_bids_until_all_are_made() -> None:
    game = Game(preset("british-oh-hell", bidding="closed"), 4, seed=3)
    for _ in range(3):
        game.bid(game.legal_bids()[-1])
        for seat in range(4):
            seen = game.observation(seat)["bids"]
            assert [b for s, b in enumerate(seen) if s != seat] == [None] * 3
            assert seen[seat] == game.bids[seat]
    game.bid(0)
    for seat in range(4):
        assert game.observation(seat)["bids"] == game.bids


def test_open_bidding_shows_each_bid_at_once() -> None:
    game = Game(preset("oh-hell"), 4, seed=3)
    game.bid(2)
    assert all(game.observation(seat)["bids"] == game.bids for seat in range(4))


def test_oh_pshaw_announces_over_or_under_after_bidding() -> None:
    game = Game(preset("oh-pshaw"), 4, seed=3)  # 1 card: total of four bids against 1 trick
    assert game.observation(0)["over_under"] is None
    for bid in (1, 1, 0, 0):
        game.bid(bid)
    assert game.observation(0)["over_under"] == "over"
    assert Game(preset("oh-hell"), 4, seed=3).observation(0)["over_under"] is None


@pytest.mark.parametrize("seat", [-1, 4, "0", None, True])
def test_observing_a_seat_that_does_not_exist_is_refused(seat: object) -> None:
    with pytest.raises(InvalidSeatError):
        Game(preset("oh-hell"), 4, seed=1).observation(seat)  # type: ignore[arg-type]
