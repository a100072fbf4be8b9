"""Helpers shared by the engine tests: play games with chosen or random actions."""

from __future__ import annotations

import random
from collections.abc import Callable

from engine import Game, Variant

RANK_ORDER = "23456789TJQKA"


def rank(card: str) -> int:
    """Rank of a card name, 0 for a two up to 12 for an ace."""
    return RANK_ORDER.index(card[0])


def trick_winner(cards: list[str], leader: int, players: int, trump: str | None) -> int:
    """Seat winning a trick, worked out from the card names alone."""
    led = cards[0][1]
    trumps = [i for i, c in enumerate(cards) if trump is not None and c[1] == trump]
    pool = trumps or [i for i, c in enumerate(cards) if c[1] == led]
    best = max(pool, key=lambda i: rank(cards[i]))
    return (leader + best) % players


def play_random(game: Game, rng: random.Random, stop: Callable[[Game], bool] | None = None) -> Game:
    """Play uniformly random legal actions until the game is over (or ``stop`` says so)."""
    while not game.is_over and not (stop and stop(game)):
        actions = game.legal_actions()
        game.apply(actions[rng.randrange(len(actions))])
    return game


def play_random_deal(game: Game, rng: random.Random) -> None:
    """Play uniformly random legal actions to the end of the current deal."""
    number = game.deal_number
    play_random(game, rng, stop=lambda g: g.deal_number != number)


def random_game(variant: Variant, players: int, seed: int) -> Game:
    """A whole game of random legal actions, reproducible from the seed."""
    return play_random(Game(variant, players, seed), random.Random(seed))


def play_lowest_card(game: Game) -> None:
    """Play the first legal card listed (a fixed, bid-independent policy)."""
    game.play(game.legal_cards()[0])


def play_deal(game: Game, bids: list[int]) -> None:
    """Bid ``bids`` by seat, then play the current deal with the fixed card policy."""
    number = game.deal_number
    while game.phase == "bid":
        game.bid(bids[game.acting_seat])
    while not game.is_over and game.deal_number == number:
        play_lowest_card(game)


def tricks_with_fixed_play(variant: Variant, players: int, seed: int) -> list[int]:
    """Tricks each seat takes in the first deal under the fixed card policy (bids all 0)."""
    game = Game(variant.with_options(hook=False), players, seed)
    play_deal(game, [0] * players)
    return list(game.deals[0].tricks_won)
