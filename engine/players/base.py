"""The interface every reference player offers, and the uniformly random player."""

from __future__ import annotations

import random
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Player(Protocol):
    """A seat's decision maker: sees only its observation and the legal actions."""

    name: str

    def bid(self, obs: dict[str, Any], legal: tuple[int, ...]) -> int:
        """Choose one of the legal bids."""
        ...

    def play(self, obs: dict[str, Any], legal: tuple[str, ...]) -> str:
        """Choose one of the legal cards."""
        ...


class RandomPlayer:
    """Uniform over the legal actions: the floor every other player must clear."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def bid(self, obs: dict[str, Any], legal: tuple[int, ...]) -> int:
        """Choose a legal bid uniformly at random."""
        return legal[self.rng.randrange(len(legal))]

    def play(self, obs: dict[str, Any], legal: tuple[str, ...]) -> str:
        """Choose a legal card uniformly at random."""
        return legal[self.rng.randrange(len(legal))]
