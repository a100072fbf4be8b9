"""The heuristic player: bids from hand strength, then plays to make its bid exactly."""

from __future__ import annotations

import random
from typing import Any

from engine.cards import CARD_INDEX, CARD_NAMES, mask_of
from engine.errors import InvalidPlayerError
from engine.players.policy import choose_bid, choose_card, estimate_tricks
from engine.players.view import read_view


class HeuristicPlayer:
    """Sound play without look-ahead; ``noise`` is the chance of a uniformly random action.

    Noise gives graded-strength opponents for ladders: 0 is full strength, 1 is random.
    """

    name = "heuristic"

    def __init__(self, seed: int = 0, noise: float = 0.0) -> None:
        if not isinstance(noise, int | float) or not 0.0 <= noise <= 1.0:
            raise InvalidPlayerError(f"noise must be a number from 0 to 1, not {noise!r}")
        self.rng = random.Random(seed)
        self.noise = float(noise)

    def _noisy(self) -> bool:
        return self.noise > 0.0 and self.rng.random() < self.noise

    def bid(self, obs: dict[str, Any], legal: tuple[int, ...]) -> int:
        """Bid the legal number nearest the hand's expected tricks."""
        if self._noisy():
            return legal[self.rng.randrange(len(legal))]
        return choose_bid(estimate_from_obs(obs), legal)

    def play(self, obs: dict[str, Any], legal: tuple[str, ...]) -> str:
        """Win cheaply while tricks are needed, duck once the bid is reached."""
        if len(legal) == 1:
            return legal[0]
        if self._noisy():
            return legal[self.rng.randrange(len(legal))]
        view = read_view(obs)
        card = choose_card(
            view.hand, mask_of(legal), view.trick, view.trump, view.gone, view.need, view.players
        )
        return CARD_NAMES[card]


def estimate_from_obs(obs: dict[str, Any]) -> float:
    """Expected tricks of the observed hand (a turned card in the stock counts as seen)."""
    hand = mask_of(obs["hand"])
    trump = "CDHS".index(obs["trump"]) if obs["trump"] else -1
    seen = 0
    if obs["trump_card"] and obs.get("trump_card_holder") is None:
        seen = 1 << CARD_INDEX[obs["trump_card"]]
    return estimate_tricks(hand, trump, obs["players"], seen)
