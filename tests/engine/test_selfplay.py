"""Batch self-play: one game per seed, reproducible alone, with replays on request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import Game, InvalidPlayerError, preset, verify_replay
from engine.cli import main
from engine.players import RandomPlayer, make_player
from engine.selfplay import play_games
from engine.simulate import derive_seed, play_game

VARIANT = preset("oh-hell", max_cards=3)


class Counting(RandomPlayer):
    """A random player that counts the decisions it was asked for."""

    name = "counting"
    made = 0

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        type(self).made += 1


def test_each_seed_plays_the_game_a_single_call_would_play() -> None:
    results = play_games(VARIANT, ["heuristic", "random", "heuristic", "random"], [5, 9, 5])
    assert [r.seed for r in results] == [5, 9, 5]
    alone = play_game(
        VARIANT,
        4,
        9,
        [
            make_player(name, derive_seed(9, s))
            for s, name in enumerate(["heuristic", "random"] * 2)
        ],
    )
    assert list(results[1].totals) == alone.totals
    assert list(results[1].ranks) == alone.ranks()
    assert results[0] == results[2]
    assert results[1].deals == len(Game(VARIANT, 4, 9).schedule)


def test_replays_are_kept_only_when_asked_and_verify() -> None:
    plain = play_games(VARIANT, ["random"] * 3, [1])
    kept = play_games(VARIANT, ["random"] * 3, [1], replays=True)
    assert plain[0].replay is None
    assert kept[0].replay is not None
    verify_replay(kept[0].replay)
    assert kept[0].to_dict()["totals"] == list(plain[0].totals)


def test_a_factory_makes_a_fresh_player_each_game_and_an_instance_is_kept() -> None:
    Counting.made = 0
    kept = RandomPlayer(3)
    play_games(VARIANT, [Counting, kept, "random"], range(4))
    assert Counting.made == 4


def test_a_seat_that_is_not_a_player_is_refused() -> None:
    with pytest.raises(InvalidPlayerError, match="seat 1: unknown player 'nobody'"):
        play_games(VARIANT, ["random", "nobody", "random"], [1])
    with pytest.raises(InvalidPlayerError, match="seat 0"):
        play_games(VARIANT, [7, "random", "random"], [1])  # type: ignore[list-item]


def test_the_command_writes_one_json_line_per_seed(tmp_path: Path) -> None:
    bot = tmp_path / "mine.py"
    bot.write_text(
        "from engine.players import RandomPlayer\nclass Mine(RandomPlayer):\n    name = 'mine'\n"
    )
    out = tmp_path / "games.jsonl"
    seats = f"{bot}:Mine,heuristic,random"
    code = main(
        [
            "selfplay",
            "--variant",
            "oh-hell",
            "--set",
            "max_cards=2",
            "--seats",
            seats,
            "--seeds",
            "10:13",
            "--out",
            str(out),
            "--replays",
        ]
    )
    assert code == 0
    lines: list[dict[str, Any]] = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["seed"] for line in lines] == [10, 11, 12]
    assert all(len(line["totals"]) == 3 and "replay" in line for line in lines)


@pytest.mark.parametrize(
    ("seats", "seeds", "message"),
    [
        ("random,random,random", "5", "--seeds must be FIRST:END"),
        ("random,random,random", "5:5", "--seeds must be FIRST:END"),
        ("random,nobody:Nope,random", "0:2", "cannot load player 'nobody:Nope'"),
        ("random,random", "0:2", "players"),
    ],
)
def test_the_command_names_bad_input(
    seats: str, seeds: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["selfplay", "--variant", "oh-hell", "--seats", seats, "--seeds", seeds])
    assert code == 2
    assert message in capsys.readouterr().err
