"""The ohhell command line: every subcommand, and a clear exit 2 for every kind of bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine import OPTIONS, PRESETS
from engine.cli import main, parse_value

MATCH = ["--players", "4", "--seats", "heuristic,random,search,random", "--samples", "2"]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_presets_lists_every_preset_with_its_player_range(capsys) -> None:
    code, out, _ = _run(capsys, "presets")
    assert code == 0
    for name in PRESETS:
        assert name in out
    assert "4-8 players" in out


def test_options_lists_every_option_with_default_values_and_help(capsys) -> None:
    code, out, _ = _run(capsys, "options")
    assert code == 0
    for name, spec in OPTIONS.items():
        assert f"{name}\n" in out
        assert spec["help"] in out


def test_rules_shows_the_description_options_and_schedule_per_player_count(capsys) -> None:
    code, out, _ = _run(capsys, "rules", "oh-hell", "--set", "max_cards=5")
    assert code == 0
    assert "Hook: the dealer may not bid" in out
    assert "max_cards            5" in out
    assert "3 players: 5 4 3 2 1 2 3 4 5 (9 deals)" in out


def test_rules_of_a_target_score_preset_say_the_game_runs_to_the_target(capsys) -> None:
    code, out, _ = _run(capsys, "rules", "oh-well")
    assert code == 0
    assert "4 players: 13 repeated until the target score" in out


def test_simulate_prints_standings_per_player_type(capsys) -> None:
    code, out, err = _run(
        capsys, "simulate", "--variant", "oh-hell", "--set", "deals=2", "--games", "3", *MATCH
    )
    assert code == 0
    for name in ("heuristic", "random", "search"):
        assert name in out
    assert "exact bids" in out
    assert err == ""  # no progress bar when stderr is not a terminal


def test_simulate_as_json_with_a_progress_bar_and_a_replay_file(capsys, tmp_path) -> None:
    replay = tmp_path / "first.json"
    code, out, err = _run(
        capsys,
        "simulate",
        "--variant",
        "blackout",
        "--set",
        "deals=2",
        "--games",
        "2",
        *MATCH,
        "--json",
        "--progress",
        "--replay",
        str(replay),
    )
    assert code == 0
    data = json.loads(out)
    assert data["games"] == 2
    assert {row["player"] for row in data["results"]} == {"heuristic", "random", "search"}
    assert "2/2 games" in err
    assert _run(capsys, "verify", str(replay))[0] == 0


def test_replay_writes_a_game_that_verify_accepts(capsys, tmp_path) -> None:
    out_file = tmp_path / "game.json"
    code, out, _ = _run(
        capsys, "replay", "nomination-whist", *MATCH, "--seed", "4", "--out", str(out_file)
    )
    assert code == 0
    assert "13 deals" in out
    code, out, _ = _run(capsys, "verify", str(out_file))
    assert code == 0
    assert out.startswith("OK: 13 deals, finished")


def test_verify_rejects_a_tampered_replay_with_the_engine_message(capsys, tmp_path) -> None:
    path = tmp_path / "game.json"
    assert _run(capsys, "replay", "oh-hell", *MATCH, "--set", "deals=2", "--out", str(path))[0] == 0
    data = json.loads(path.read_text())
    data["totals"][0] += 1
    path.write_text(json.dumps(data))
    code, _, err = _run(capsys, "verify", str(path))
    assert code == 2
    assert "invalid replay" in err
    assert "totals: the replay says" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["rules", "oh-heck"], "unknown preset 'oh-heck'"),
        (["rules", "oh-hell", "--set", "colour=red"], "colour: unknown option"),
        (["rules", "oh-hell", "--set", "hook=maybe"], "hook: must be true or false"),
        (["rules", "oh-hell", "--set", "max_cards=30"], "max_cards:"),
        (["rules", "oh-hell", "--set", "hook"], "--set needs OPTION=VALUE"),
        (["simulate", "--variant", "oh-hell", "--players", "9", "--seats", "random"], "players:"),
        (
            ["simulate", "--variant", "oh-hell", *MATCH[:2], "--seats", "random,bot,random,random"],
            "unknown player 'bot'",
        ),
        (
            ["simulate", "--variant", "oh-hell", *MATCH[:2], "--seats", "random,random"],
            "give one per seat",
        ),
        (["simulate", "--variant", "oh-hell", *MATCH, "--games", "0"], "--games must be"),
        (["simulate", "--variant", "oh-hell", *MATCH, "--noise", "2"], "noise must be"),
        (["simulate", "--variant", "oh-hell", *MATCH, "--seed", "-1"], "--seed must be"),
        (
            ["simulate", "--variant", "oh-hell", "--players", "four", "--seats", "random"],
            "invalid int value",
        ),
        (["replay", "oh-hell", *MATCH], "--out"),
        (["verify", "/nonexistent/replay.json"], "cannot read /nonexistent/replay.json"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_input_exits_2_with_a_message_naming_the_problem(capsys, argv, message) -> None:
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_verify_refuses_invalid_json_and_files_that_are_not_replays(capsys, tmp_path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    code, _, err = _run(capsys, "verify", str(broken))
    assert code == 2
    assert "is not valid JSON" in err
    other = tmp_path / "other.json"
    other.write_text('{"format": "chess"}')
    code, _, err = _run(capsys, "verify", str(other))
    assert code == 2
    assert "not a replay" in err


def test_replay_refuses_an_unwritable_output_file(capsys, tmp_path) -> None:
    target = tmp_path / "missing" / "game.json"
    code, _, err = _run(
        capsys, "replay", "oh-hell", *MATCH, "--set", "deals=1", "--out", str(target)
    )
    assert code == 2
    assert "cannot write" in err


def test_option_values_read_as_json_where_they_parse() -> None:
    assert parse_value("7") == 7
    assert parse_value("false") is False
    assert parse_value("null") is None
    assert parse_value("10+bid") == "10+bid"


def test_the_console_script_runs_as_a_program() -> None:
    script = shutil.which("ohhell") or str(Path(sys.executable).parent / "ohhell")
    if not Path(script).exists():
        pytest.skip("the ohhell console script is not installed (pip install -e .)")
    done = subprocess.run([script, "presets"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "la-podrida" in done.stdout
    bad = subprocess.run([script, "rules", "nope"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert "unknown preset 'nope'" in bad.stderr


def test_rules_accept_made_zero_given_as_a_number(capsys) -> None:
    code, out, err = _run(capsys, "rules", "oh-hell", "--set", "made_zero=5")

    assert code == 0, err
    assert "unknown value" not in out + err
