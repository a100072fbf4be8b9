"""Bidding and play: the hook, follow suit, must-trump, discards, and each illegal action."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest

from engine import (
    BidOutOfRangeError,
    CardNotInHandError,
    FollowSuitError,
    Game,
    GameOverError,
    HookViolationError,
    IllegalActionError,
    InvalidSeedError,
    MustTrumpError,
    NotACardError,
    OutOfTurnError,
    Phase,
    WrongPhaseError,
    preset,
)
from engine.cards import SUIT_MASKS
from engine.game import winning_position
from tests.support.engine import play_random, random_game

ALL_CARDS = [r + s for s in "CDHS" for r in "23456789TJQKA"]


def advance_until(game: Game, seed: int, wanted: Callable[[Game], bool]) -> Game:
    """Play random legal actions until ``wanted`` holds; fail if the game ends first."""
    play_random(game, random.Random(seed), stop=wanted)
    assert not game.is_over, "the situation never came up"
    return game


def bid_all_but_dealer(game: Game, bids: list[int]) -> None:
    """Make the non-dealers' bids, in turn, leaving the dealer to bid."""
    for bid in bids:
        game.bid(bid)
    assert game.to_act == game.dealer


def one_card_game(players: int = 4, **options: object) -> Game:
    variant = preset("oh-hell", order="constant", max_cards=1, deals=2, **options)
    return Game(variant, players, seed=1)


# -- the hook --------------------------------------------------------------------------------


def test_the_hook_forbids_the_dealer_the_bid_that_makes_the_total_right() -> None:
    game = Game(preset("oh-hell"), 4, seed=1)  # the first deal has 10 cards
    bid_all_but_dealer(game, [2, 3, 1])
    assert game.forbidden_bid() == 4
    assert game.legal_bids() == (0, 1, 2, 3, 5, 6, 7, 8, 9, 10)
    with pytest.raises(HookViolationError):
        game.bid(4)
    game.bid(5)
    assert game.phase == "play"


def test_only_the_dealer_is_restricted_by_the_hook() -> None:
    game = Game(preset("oh-hell"), 4, seed=1)
    for bid in (10, 0):
        assert game.forbidden_bid() is None
        assert game.legal_bids() == tuple(range(11))
        game.bid(bid)
    assert game.forbidden_bid() is None
    assert game.legal_bids() == tuple(range(11))


def test_no_restriction_when_the_forbidden_bid_is_out_of_range() -> None:
    game = one_card_game()
    bid_all_but_dealer(game, [1, 1, 0])  # already over: the dealer would need -1
    assert game.forbidden_bid() is None
    assert game.legal_bids() == (0, 1)


def test_in_a_one_card_deal_the_dealer_must_break_the_total() -> None:
    game = one_card_game()
    bid_all_but_dealer(game, [0, 0, 0])
    assert game.legal_bids() == (0,)
    with pytest.raises(HookViolationError):
        game.bid(1)
    other = one_card_game()
    bid_all_but_dealer(other, [0, 1, 0])
    assert other.legal_bids() == (1,)
    with pytest.raises(HookViolationError):
        other.bid(0)


def test_without_the_hook_the_dealer_may_bid_anything() -> None:
    game = one_card_game(hook=False)
    bid_all_but_dealer(game, [0, 0, 0])
    assert game.forbidden_bid() is None
    assert game.legal_bids() == (0, 1)
    game.bid(1)
    assert game.phase == "play"


# -- follow suit, must-trump, discards -------------------------------------------------------


def seat_to_act_holds(game: Game, predicate: Callable[[str, list[str], str | None], bool]) -> bool:
    """Whether, during a trick, the seat to act's hand meets ``predicate(led, hand, trump)``."""
    if game.phase != "play" or not game.trick:
        return False
    return predicate(game.trick[0][1], list(game.hand(game.acting_seat)), game.trump)


def holds_led_and_more(led: str, hand: list[str], trump: str | None) -> bool:
    return any(c[1] == led for c in hand) and any(c[1] != led for c in hand)


def void_with_trump_and_more(led: str, hand: list[str], trump: str | None) -> bool:
    return (
        trump is not None
        and all(c[1] != led for c in hand)
        and any(c[1] == trump for c in hand)
        and any(c[1] != trump for c in hand)
    )


def test_a_player_holding_the_suit_led_must_follow_it() -> None:
    game = advance_until(
        Game(preset("oh-hell"), 4, seed=2), 2, lambda g: seat_to_act_holds(g, holds_led_and_more)
    )
    led = game.trick[0][1]
    legal = game.legal_cards()
    assert legal == tuple(c for c in game.hand(game.acting_seat) if c[1] == led)
    off_suit = next(c for c in game.hand(game.acting_seat) if c[1] != led)
    with pytest.raises(FollowSuitError):
        game.play(off_suit)
    game.play(legal[-1])


def test_without_must_trump_a_void_player_may_play_any_card() -> None:
    game = advance_until(
        Game(preset("oh-hell"), 4, seed=3),
        3,
        lambda g: seat_to_act_holds(g, void_with_trump_and_more),
    )
    assert game.legal_cards() == game.hand(game.acting_seat)
    discard = next(c for c in game.hand(game.acting_seat) if c[1] != game.trump)
    game.play(discard)


def test_la_podrida_makes_a_void_player_with_trumps_play_one() -> None:
    game = advance_until(
        Game(preset("la-podrida"), 4, seed=3),
        3,
        lambda g: seat_to_act_holds(g, void_with_trump_and_more),
    )
    hand = game.hand(game.acting_seat)
    assert game.legal_cards() == tuple(c for c in hand if c[1] == game.trump)
    with pytest.raises(MustTrumpError):
        game.play(next(c for c in hand if c[1] != game.trump))


def test_la_podrida_does_not_require_overtrumping() -> None:
    def under_trump_possible(g: Game) -> bool:
        if not seat_to_act_holds(g, void_with_trump_and_more):
            return False
        best = max((c for c in g.trick if c[1] == g.trump), key=_rank, default=None)
        return best is not None and any(
            c[1] == g.trump and _rank(c) < _rank(best) for c in g.hand(g.acting_seat)
        )

    for seed in range(40):
        game = Game(preset("la-podrida"), 5, seed)
        play_random(game, random.Random(seed), stop=under_trump_possible)
        if not game.is_over:
            break
    else:
        raise AssertionError("no seed led to an undertrump")
    best = max((c for c in game.trick if c[1] == game.trump), key=_rank)
    hand = game.hand(game.acting_seat)
    lower = next(c for c in hand if c[1] == game.trump and _rank(c) < _rank(best))
    assert lower in game.legal_cards()
    game.play(lower)


def _rank(card: str) -> int:
    return "23456789TJQKA".index(card[0])


def test_a_void_player_without_trump_may_discard_anything() -> None:
    variant = preset(
        "la-podrida", max_cards="max_possible", order="constant", deals=1, max_players=4
    )  # 13 cards each: no card left to turn, no trump
    game = Game(variant, 4, seed=6)
    assert game.trump is None

    def void(g: Game) -> bool:
        return seat_to_act_holds(g, lambda led, hand, _: all(c[1] != led for c in hand))

    advance_until(game, 6, void)
    assert game.legal_cards() == game.hand(game.acting_seat)


def test_the_leader_may_lead_any_card() -> None:
    game = advance_until(Game(preset("la-podrida"), 4, seed=1), 1, lambda g: g.phase == "play")
    assert game.legal_cards() == game.hand(game.acting_seat)


# -- who wins a trick ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trick", "trump", "position"),
    [
        (["2C", "AC", "KC", "3C"], -1, 1),  # highest of the suit led
        (["2C", "AD", "KD", "3C"], -1, 3),  # other suits never win without trump
        (["2C", "AC", "2S", "3C"], 3, 2),  # any trump beats the suit led
        (["2C", "3S", "AS", "AC"], 3, 2),  # the highest trump wins
        (["KS", "AC", "2S", "3D"], 3, 0),  # a trump led wins against off-suit cards
        (["TH", "JH", "QD", "9H"], 1, 2),
    ],
)
def test_a_trick_goes_to_the_highest_trump_else_the_highest_of_the_suit_led(
    trick: list[str], trump: int, position: int
) -> None:
    bits = [1 << ALL_CARDS.index(c) for c in trick]
    trump_mask = SUIT_MASKS[trump] if trump >= 0 else 0
    led_mask = SUIT_MASKS[ALL_CARDS.index(trick[0]) // 13]
    assert winning_position(bits, trump_mask, led_mask) == position


# -- illegal actions -------------------------------------------------------------------------


def test_every_illegal_action_error_is_a_value_error() -> None:
    for cls in (
        GameOverError,
        OutOfTurnError,
        WrongPhaseError,
        BidOutOfRangeError,
        HookViolationError,
        NotACardError,
        CardNotInHandError,
        FollowSuitError,
        MustTrumpError,
    ):
        assert issubclass(cls, IllegalActionError)
        assert issubclass(cls, ValueError)


def test_no_action_is_accepted_once_the_game_is_over() -> None:
    game = random_game(preset("oh-hell", max_cards=2, order="down"), 3, seed=1)
    assert game.is_over
    assert game.legal_actions() == ()
    with pytest.raises(GameOverError):
        game.bid(0)
    with pytest.raises(GameOverError):
        game.play("AS")
    with pytest.raises(GameOverError):
        game.apply(0)


def test_a_seat_acting_out_of_turn_is_refused() -> None:
    game = Game(preset("oh-hell"), 4, seed=1)
    with pytest.raises(OutOfTurnError):
        game.bid(1, seat=(game.acting_seat + 1) % 4)
    game.bid(1, seat=game.to_act)


@pytest.mark.parametrize("bid", [-1, 11, True, False, 1.0, "1", None])
def test_a_bid_that_is_not_an_integer_in_range_is_refused(bid: object) -> None:
    game = Game(preset("oh-hell"), 4, seed=1)
    with pytest.raises(BidOutOfRangeError):
        game.bid(bid)  # type: ignore[arg-type]
    assert game.bids == [None] * 4  # nothing recorded


def test_a_card_during_bidding_and_a_bid_during_play_are_the_wrong_phase() -> None:
    game = Game(preset("oh-hell"), 4, seed=1)
    with pytest.raises(WrongPhaseError):
        game.play(game.hand(game.acting_seat)[0])
    for _ in range(3):
        game.bid(0)
    game.bid(game.legal_bids()[0])
    with pytest.raises(WrongPhaseError):
        game.bid(0)


@pytest.mark.parametrize("card", ["XX", "td", "10D", "", "A", 7, None, "ASS"])
def test_a_string_that_is_not_a_card_is_refused(card: object) -> None:
    game = advance_until(Game(preset("oh-hell"), 4, seed=1), 1, lambda g: g.phase == "play")
    with pytest.raises(NotACardError):
        game.play(card)  # type: ignore[arg-type]


def test_a_card_the_seat_does_not_hold_is_refused() -> None:
    game = advance_until(Game(preset("oh-hell"), 4, seed=1), 1, lambda g: g.phase == "play")
    other = game.hand((game.acting_seat + 1) % 4)[0]
    with pytest.raises(CardNotInHandError):
        game.play(other)
    assert game.trick == []


def test_a_refused_card_changes_nothing() -> None:
    game = advance_until(
        Game(preset("oh-hell"), 4, seed=2), 2, lambda g: seat_to_act_holds(g, holds_led_and_more)
    )
    before = (game.acting_seat, game.hand(game.acting_seat), game.trick, game.replay())
    off_suit = next(c for c in game.hand(game.acting_seat) if c[1] != game.trick[0][1])
    with pytest.raises(FollowSuitError):
        game.play(off_suit)
    assert (game.acting_seat, game.hand(game.acting_seat), game.trick, game.replay()) == before


def test_apply_takes_a_bid_while_bidding_and_a_card_while_playing() -> None:
    game = Game(preset("oh-hell"), 3, seed=4)
    while game.phase == "bid":
        game.apply(game.legal_actions()[0])
    card = game.legal_actions()[0]
    assert isinstance(card, str)
    game.apply(card)
    assert game.trick == [card]


@pytest.mark.parametrize("call", ["apply", "play"])
def test_a_card_during_bidding_is_the_wrong_phase(call: str) -> None:
    game = Game(preset("oh-hell"), 4, seed=1)
    card = game.observation(game.acting_seat)["hand"][0]

    with pytest.raises(WrongPhaseError):
        getattr(game, call)(card)


def test_a_bid_during_play_is_the_wrong_phase() -> None:
    game = Game(preset("oh-hell", max_cards=1, order="down"), 3, seed=1)
    while game.phase is Phase.BID:
        game.bid(game.legal_bids()[0])

    with pytest.raises(WrongPhaseError):
        game.bid(0)


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, "7", None, True])
def test_a_bad_seed_is_an_engine_error(seed: object) -> None:
    with pytest.raises(InvalidSeedError):
        Game(preset("oh-hell"), 4, seed)  # type: ignore[arg-type]


def test_phases_are_an_enum_that_reads_as_its_name() -> None:
    game = Game(preset("oh-hell"), 4, seed=1)

    assert game.phase is Phase.BID
    assert game.phase == "bid"
    assert json.dumps(game.observation(0)["phase"]) == '"bid"'
