"""Who deals, how the cards are dealt and how trump is chosen (docs/rules.md 1, 3.1, 3.3, 3.4).

A small reference model below re-does the dealing from the seed with its own code, so the
engine's first dealer, hands and turned cards are checked card by card.
"""

from __future__ import annotations

import random

import pytest

from engine import CARD_NAMES, PRESETS, Game, preset
from engine.cards import card_names
from tests.support.engine import play_random, play_random_deal, random_game

SUITS = "CDHS"


def ref_draw(rng: random.Random, bound: int) -> int:
    """A uniform integer below ``bound``: rejection sampling on ``getrandbits``."""
    while True:
        r = rng.getrandbits(bound.bit_length())
        if r < bound:
            return r


def ref_shuffle(rng: random.Random, count: int) -> list[int]:
    """The pack 0..51 with its first ``count`` positions shuffled (Fisher-Yates)."""
    deck = list(range(52))
    for i in range(min(count, 51)):
        j = i + ref_draw(rng, 52 - i)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def ref_first_dealer(rng: random.Random, method: str, players: int) -> int:
    """The first dealer as docs/rules.md 3.3 describes it."""
    if method == "random":
        return ref_draw(rng, players)
    if method == "draw":
        seats = list(range(players))
        while True:
            deck = ref_shuffle(rng, len(seats))
            ranks = {seat: deck[i] % 13 for i, seat in enumerate(seats)}
            top = max(ranks.values())
            seats = [seat for seat in seats if ranks[seat] == top]
            if len(seats) == 1:
                return seats[0]
    start = ref_draw(rng, players)
    deck = ref_shuffle(rng, 52)
    first_jack = next(i for i, card in enumerate(deck) if CARD_NAMES[card][0] == "J")
    return (start + first_jack) % players


def ref_deals(name: str, players: int, seed: int, deals: int) -> tuple[int, list[dict]]:
    """First dealer, then each deal's dealer, hands and turned card, from the seed."""
    variant = preset(name)
    rng = random.Random(seed)
    first = ref_first_dealer(rng, variant.first_dealer, players)
    out = []
    for k, size in enumerate(variant.schedule(players)[:deals]):
        dealer = (first + k) % players
        deck = ref_shuffle(rng, players * size + 1)
        hands: list[set[str]] = [set() for _ in range(players)]
        for i in range(players * size):
            hands[(dealer + 1 + i) % players].add(CARD_NAMES[deck[i]])
        dealt = players * size
        turned = CARD_NAMES[deck[dealt]] if dealt < 52 else None
        out.append(
            {"dealer": dealer, "hands": hands, "next": turned, "last": CARD_NAMES[deck[dealt - 1]]}
        )
    return first, out


PRESET_CASES = [
    (name, n) for name, v in PRESETS.items() for n in range(v.min_players, v.max_players + 1)
]


@pytest.mark.parametrize(("name", "players"), PRESET_CASES)
@pytest.mark.parametrize("seed", [0, 1, 2**40 + 7])
def test_dealer_hands_and_turned_card_follow_from_the_seed(
    name: str, players: int, seed: int
) -> None:
    game = play_random(
        Game(preset(name), players, seed), random.Random(seed), stop=lambda g: g.deal_number > 3
    )
    first, expected = ref_deals(name, players, seed, len(game.deals))
    assert game.first_dealer == first
    for deal, ref in zip(game.deals, expected, strict=True):
        assert deal.dealer == ref["dealer"]
        assert [set(card_names(h)) for h in deal.hands] == ref["hands"]
        trump_card = CARD_NAMES[deal.trump_card] if deal.trump_card >= 0 else None
        if preset(name).trump == "dealer_last_card":
            assert trump_card == ref["last"]
        elif deal.hand_size * players < 52 - preset(name).removed(players):
            assert trump_card == ref["next"]


@pytest.mark.parametrize("method", ["random", "draw", "first_jack"])
def test_the_first_dealer_is_reproducible_from_the_seed(method: str) -> None:
    variant = preset("oh-hell", first_dealer=method)
    dealers = [Game(variant, 5, seed).first_dealer for seed in range(60)]
    assert dealers == [Game(variant, 5, seed).first_dealer for seed in range(60)]
    assert set(dealers) == set(range(5))  # every seat can deal first


def test_the_draw_gives_the_deal_to_the_highest_card() -> None:
    # Seed 0 with 4 players: one round of drawing; the reference shows the cards drawn.
    for seed in range(30):
        rng = random.Random(seed)
        deck = ref_shuffle(rng, 4)
        ranks = [deck[i] % 13 for i in range(4)]
        if ranks.count(max(ranks)) == 1:
            assert Game(preset("oh-hell"), 4, seed).first_dealer == ranks.index(max(ranks))


def test_first_jack_gives_the_deal_to_whoever_receives_the_first_jack() -> None:
    for seed in range(30):
        rng = random.Random(seed)
        start = ref_draw(rng, 6)
        deck = [CARD_NAMES[c] for c in ref_shuffle(rng, 52)]
        position = next(i for i, card in enumerate(deck) if card.startswith("J"))
        game = Game(preset("nomination-whist"), 6, seed)
        assert game.first_dealer == (start + position) % 6


@pytest.mark.parametrize(("name", "players"), [("oh-hell", 5), ("up-and-down-the-river", 8)])
def test_the_deal_passes_clockwise_and_eldest_bids_and_leads_first(name: str, players: int) -> None:
    rng = random.Random(4)
    game = Game(preset(name), players, seed=4)
    while not game.is_over:
        deal = game.deals[-1]
        assert deal.dealer == (game.first_dealer + game.deal_number - 1) % players
        eldest = (deal.dealer + 1) % players
        bidders = []
        while game.phase == "bid":
            bidders.append(game.to_act)
            bids = game.legal_bids()
            game.bid(bids[rng.randrange(len(bids))])
        assert bidders == [(eldest + i) % players for i in range(players)]
        assert game.to_act == eldest
        play_random_deal(game, rng)
        assert deal.leaders[0] == eldest
        assert deal.leaders[1:] == deal.winners[:-1]  # the winner leads to the next trick


def test_turn_up_turns_a_card_nobody_holds() -> None:
    for deal in random_game(preset("oh-hell"), 4, seed=8).deals:
        dealt = 0
        for hand in deal.hands:
            dealt |= hand
        assert deal.trump_card >= 0
        assert not dealt >> deal.trump_card & 1
        assert deal.trump == deal.trump_card // 13


@pytest.mark.parametrize("name", ["british-oh-hell", "oh-pshaw"])
def test_no_trump_when_the_whole_pack_is_dealt(name: str) -> None:
    game = random_game(preset(name), 4, seed=21)
    largest = game.deals[-1]
    assert largest.hand_size == 13
    assert (largest.trump, largest.trump_card) == (-1, -1)
    assert all(deal.trump >= 0 for deal in game.deals[:-1])


def test_three_players_with_seventeen_cards_turn_the_one_card_left() -> None:
    game = random_game(preset("british-oh-hell"), 3, seed=21)
    largest = game.deals[-1]
    assert largest.hand_size == 17
    assert largest.trump_card >= 0


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
def test_oh_well_turns_the_dealers_last_card_and_leaves_it_in_his_hand(players: int) -> None:
    game = Game(preset("oh-well"), players, seed=players)
    deal = game.deals[-1]
    assert deal.hands[deal.dealer] >> deal.trump_card & 1
    assert game.trump_card in game.hand(deal.dealer)
    assert game.trump == game.trump_card[1]
    for seat in range(players):
        seen = game.observation(seat)
        assert seen["trump_card"] == game.trump_card
        assert seen["trump_card_holder"] == deal.dealer


@pytest.mark.parametrize(("players", "removed"), [(3, 1), (4, 0), (5, 2), (6, 4), (7, 3)])
def test_oh_well_removes_cards_so_the_pack_divides_evenly(players: int, removed: int) -> None:
    variant = preset("oh-well")
    assert variant.removed(players) == removed
    game = random_game(variant, players, seed=9)
    for deal in game.deals:
        dealt = 0
        for hand in deal.hands:
            assert not dealt & hand
            dealt |= hand
        assert bin(dealt).count("1") == 52 - removed


@pytest.mark.parametrize(
    ("cycle", "expected"),
    [
        ("SDCH", ["S", "D", "C", "H", "S", "D"]),
        ("CDHS", ["C", "D", "H", "S", "C", "D"]),
        ("CDHSN", ["C", "D", "H", "S", None, "C"]),
    ],
)
def test_a_fixed_trump_follows_its_cycle_deal_by_deal(cycle: str, expected: list) -> None:
    variant = preset(
        "oh-hell", trump="fixed", trump_cycle=cycle, order="constant", max_cards=3, deals=6
    )
    game = random_game(variant, 4, seed=1)
    assert [SUITS[d.trump] if d.trump >= 0 else None for d in game.deals] == expected
    assert all(deal.trump_card == -1 for deal in game.deals)  # nothing is turned


def test_a_deal_without_trump_is_won_by_the_suit_led() -> None:
    variant = preset(
        "oh-hell",
        trump="fixed",
        trump_cycle="CDHSN",
        order="constant",
        max_cards=8,
        deals=5,
        max_players=4,
    )
    game = random_game(variant, 4, seed=3)
    no_trump = game.deals[4]
    for t, winner in enumerate(no_trump.winners):
        cards = no_trump.plays[t * 4 : (t + 1) * 4]
        led = cards[0] // 13
        best = max(c for c in cards if c // 13 == led)
        assert winner == (no_trump.leaders[t] + cards.index(best)) % 4


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
def test_ascending_blackout_plays_only_its_last_deal_without_trump(players: int) -> None:
    game = random_game(preset("ascending-blackout"), players, seed=13)
    assert game.deals[-1].trump == -1
    assert game.deals[-1].trump_card == -1
    assert all(deal.trump >= 0 for deal in game.deals[:-1])


def test_last_deal_no_trump_also_applies_to_a_fixed_cycle() -> None:
    variant = preset("oh-hell", trump="fixed", order="up", max_cards=4, last_deal_no_trump=True)
    game = random_game(variant, 4, seed=2)
    assert [SUITS[d.trump] if d.trump >= 0 else None for d in game.deals] == ["S", "D", "C", None]
