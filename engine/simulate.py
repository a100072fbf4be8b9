"""Matches between reference players: one game, or many with seats rotated and a summary.

Players only ever get ``game.observation(seat)`` and the legal actions. Seeds of games and
players derive from one base seed, so a run is reproducible and can be split into chunks.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.errors import InvalidPlayerError
from engine.game import Game, Phase
from engine.players import Player, make_player
from engine.variant import Variant

Progress = Callable[[int, int], None]


def derive_seed(seed: int, *parts: int) -> int:
    """A seed for one part of a run (a game, a seat), independent of the others."""
    text = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


def play_game(variant: Variant, players: int, seed: int, seats: Sequence[Player]) -> Game:
    """Play one game to its end, asking each seat's player with its observation."""
    if len(seats) != players:
        raise InvalidPlayerError(f"need one player per seat: {players} seats, {len(seats)} players")
    game = Game(variant, players, seed)
    while not game.is_over:
        seat = game.acting_seat
        player = seats[seat]
        obs = game.observation(seat)
        if game.phase is Phase.BID:
            game.bid(player.bid(obs, game.legal_bids()), seat)
        else:
            game.play(player.play(obs, game.legal_cards()), seat)
    return game


@dataclass
class PlayerStats:
    """Results of one player type: per-game means over its seats, and per-deal exact bids."""

    seats: int = 0
    scores: list[float] = field(default_factory=list)
    ranks: list[float] = field(default_factory=list)
    wins: list[float] = field(default_factory=list)
    exact: int = 0
    deals: int = 0

    @property
    def games(self) -> int:
        """Games this type played in."""
        return len(self.scores)

    @property
    def mean_score(self) -> float:
        """Average final score of one seat of this type."""
        return _mean(self.scores)

    @property
    def mean_rank(self) -> float:
        """Average rank of one seat of this type (1 is best)."""
        return _mean(self.ranks)

    @property
    def win_share(self) -> float:
        """Share of the games won by this type (a tie splits the win)."""
        return _mean(self.wins)

    @property
    def exact_rate(self) -> float:
        """Share of deals in which a seat of this type made its bid exactly."""
        return self.exact / self.deals if self.deals else 0.0

    def interval(self, what: str) -> float:
        """Half-width of the 95% confidence interval of a per-game mean (games are units)."""
        values: list[float] = getattr(self, what)
        n = len(values)
        if n < 2:
            return math.nan
        mean = _mean(values)
        var = sum((v - mean) ** 2 for v in values) / (n - 1)
        return 1.96 * math.sqrt(var / n)


@dataclass
class Summary:
    """Per-player-type results of a run of games."""

    games: int = 0
    deals: int = 0
    stats: dict[str, PlayerStats] = field(default_factory=dict)

    def add(self, game: Game, names: Sequence[str]) -> None:
        """Count one finished game whose seat ``s`` was played by ``names[s]``."""
        self.games += 1
        self.deals += len(game.deals)
        ranks = game.ranks()
        won = [r == 1 for r in ranks]
        share = 1.0 / sum(won)
        exact = game.exact_bids()
        for name in dict.fromkeys(names):
            seats = [s for s, n in enumerate(names) if n == name]
            st = self.stats.setdefault(name, PlayerStats(seats=len(seats)))
            st.scores.append(_mean([game.totals[s] for s in seats]))
            st.ranks.append(_mean([ranks[s] for s in seats]))
            st.wins.append(share * sum(won[s] for s in seats))
            st.exact += sum(exact[s] for s in seats)
            st.deals += len(game.deals) * len(seats)

    def merge(self, other: Summary) -> None:
        """Fold in the results of another chunk of the same run."""
        self.games += other.games
        self.deals += other.deals
        for name, st in other.stats.items():
            mine = self.stats.setdefault(name, PlayerStats(seats=st.seats))
            mine.scores += st.scores
            mine.ranks += st.ranks
            mine.wins += st.wins
            mine.exact += st.exact
            mine.deals += st.deals

    def table(self) -> list[dict[str, Any]]:
        """Rows per player type, best average rank first, ready to print or dump as JSON."""
        rows = [
            {
                "player": name,
                "seats": st.seats,
                "games": st.games,
                "mean_score": round(st.mean_score, 2),
                "mean_score_ci95": round(st.interval("scores"), 2),
                "mean_rank": round(st.mean_rank, 3),
                "mean_rank_ci95": round(st.interval("ranks"), 3),
                "win_share": round(st.win_share, 4),
                "win_share_ci95": round(st.interval("wins"), 4),
                "exact_bid_rate": round(st.exact_rate, 4),
            }
            for name, st in self.stats.items()
        ]
        return sorted(rows, key=lambda r: (r["mean_rank"], r["player"]))


def seat_names(player_names: Sequence[str], index: int) -> list[str]:
    """The player type of each seat in game ``index``: the list rotated by one seat a game."""
    n = len(player_names)
    return [player_names[(s + index) % n] for s in range(n)]


def simulate(
    variant: Variant,
    players: int,
    seed: int,
    player_names: Sequence[str],
    games: int,
    progress: Progress | None = None,
    options: dict[str, dict[str, Any]] | None = None,
    start: int = 0,
    on_game: Callable[[int, Game, list[str]], None] | None = None,
) -> Summary:
    """Play ``games`` games (numbered from ``start``) with seats rotated; summarise by type.

    ``options`` maps a player name to keyword options for ``make_player``; ``on_game`` sees
    each finished game with its number and seat names (to keep a replay, say).
    """
    variant.check_players(players)
    if len(player_names) != players:
        raise InvalidPlayerError(
            f"need {players} player names, one per seat, not {len(player_names)}"
        )
    summary = Summary()
    for i in range(start, start + games):
        names = seat_names(player_names, i)
        seats = [
            make_player(name, derive_seed(seed, i, s), **(options or {}).get(name, {}))
            for s, name in enumerate(names)
        ]
        game = play_game(variant, players, derive_seed(seed, i), seats)
        summary.add(game, names)
        if on_game is not None:
            on_game(i, game, names)
        if progress is not None:
            progress(i - start + 1, games)
    return summary


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
