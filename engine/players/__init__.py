"""Reference players: ``random``, ``heuristic`` and ``search``, all driven by observations.

A player gets exactly ``game.observation(seat)`` and the legal actions, never the game, so
the same players can sit behind HTTP in the arena. Each draws randomness only from its own
``random.Random(seed)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.errors import InvalidPlayerError
from engine.players.base import Player, RandomPlayer
from engine.players.heuristic import HeuristicPlayer
from engine.players.search import SearchPlayer

PLAYERS: dict[str, Callable[..., Player]] = {
    "random": RandomPlayer,
    "heuristic": HeuristicPlayer,
    "search": SearchPlayer,
}
PLAYER_NOTES: dict[str, str] = {
    "random": "uniform over the legal actions",
    "heuristic": "bids from hand strength, plays to make the bid exactly (option: noise 0..1)",
    "search": "determinised Monte Carlo with heuristic rollouts (options: samples, max_ms)",
}


def make_player(name: str, seed: int = 0, **options: Any) -> Player:
    """Build a reference player by name; unknown names or options raise InvalidPlayerError."""
    try:
        factory = PLAYERS[name]
    except (KeyError, TypeError):
        raise InvalidPlayerError(
            f"unknown player {name!r}; choose one of {', '.join(PLAYERS)}"
        ) from None
    try:
        return factory(seed, **options)
    except TypeError as exc:
        raise InvalidPlayerError(f"bad options for player {name!r}: {exc}") from None


__all__ = [
    "PLAYERS",
    "PLAYER_NOTES",
    "HeuristicPlayer",
    "Player",
    "RandomPlayer",
    "SearchPlayer",
    "make_player",
]
