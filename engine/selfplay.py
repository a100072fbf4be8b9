"""Batch self-play: many games of given players and variant, from given seeds, in one call.

For bot authors who train or tune a player: each seat is a reference player's name, a
factory ``seed -> Player`` (a fresh player per game) or a ``Player`` kept across games; each
game is dealt from its seed, so a result can be reproduced alone with ``Game(variant, n, seed)``
and the same players. ``iter_games`` yields results as games end (for long runs);
``play_games`` returns them all. The command ``ohhell selfplay`` does the same from a shell.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import InvalidPlayerError
from engine.players import PLAYERS, Player, make_player
from engine.simulate import derive_seed, play_game
from engine.variant import Variant

PlayerFactory = Callable[[int], Player]
SeatSpec = str | PlayerFactory | Player


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game: its seed, each seat's total, rank and bonus, and its replay if kept."""

    seed: int
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    bonus: tuple[int, ...]
    deals: int
    replay: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``ohhell selfplay`` writes, one line per game."""
        out: dict[str, Any] = {
            "seed": self.seed,
            "totals": list(self.totals),
            "ranks": list(self.ranks),
            "bonus": list(self.bonus),
            "deals": self.deals,
        }
        if self.replay is not None:
            out["replay"] = self.replay
        return out


def _seat_maker(spec: SeatSpec, seat: int) -> PlayerFactory:
    if isinstance(spec, str):
        if spec not in PLAYERS:
            raise InvalidPlayerError(
                f"seat {seat}: unknown player {spec!r}; choose one of {', '.join(PLAYERS)}"
            )
        return lambda seed: make_player(spec, seed)
    if isinstance(spec, type) or (callable(spec) and not isinstance(spec, Player)):
        return spec  # a class (which has a Player's attributes too) or a factory
    if isinstance(spec, Player):
        return lambda seed: spec
    raise InvalidPlayerError(f"seat {seat}: a player name, a factory or a Player, not {spec!r}")


def iter_games(
    variant: Variant, seats: Sequence[SeatSpec], seeds: Iterable[int], *, replays: bool = False
) -> Iterator[GameResult]:
    """Play one game per seed with ``seats`` in order, yielding each result as it ends."""
    players = len(seats)
    variant.check_players(players)
    makers = [_seat_maker(spec, seat) for seat, spec in enumerate(seats)]
    for seed in seeds:
        game = play_game(
            variant,
            players,
            seed,
            [make(derive_seed(seed, seat)) for seat, make in enumerate(makers)],
        )
        yield GameResult(
            seed=seed,
            totals=tuple(game.totals),
            ranks=tuple(game.ranks()),
            bonus=tuple(game.bonus),
            deals=len(game.deals),
            replay=game.replay() if replays else None,
        )


def play_games(
    variant: Variant, seats: Sequence[SeatSpec], seeds: Iterable[int], *, replays: bool = False
) -> list[GameResult]:
    """Play one game per seed with ``seats`` in order and return every result."""
    return list(iter_games(variant, seats, seeds, replays=replays))


def load_player(spec: str) -> SeatSpec:
    """A seat from the command line: a reference player's name, or ``FILE.py:NAME`` or
    ``MODULE:NAME`` naming a ``Player`` class or factory taking a seed."""
    if ":" not in spec:
        return spec
    where, _, name = spec.rpartition(":")
    try:
        if where.endswith(".py"):
            path = Path(where)
            loader = importlib.util.spec_from_file_location(path.stem, path)
            if loader is None or loader.loader is None:
                raise InvalidPlayerError(f"cannot load {where}")
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except (ImportError, OSError, SyntaxError) as exc:
        raise InvalidPlayerError(f"cannot load player {spec!r}: {exc}") from None
    factory = getattr(module, name, None)
    if not callable(factory):
        raise InvalidPlayerError(f"{where} has no player class or factory named {name!r}")
    made: PlayerFactory = factory
    return made
