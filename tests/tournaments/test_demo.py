"""The README's first command: the demo plays a tournament end to end on embedded defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from config.settings import EMBEDDED_NOTED

ROOT = Path(__file__).resolve().parents[2]


def run_demo(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``manage.py demo`` without serving, as ``./run`` does, and wait for it."""
    return subprocess.run(
        [sys.executable, "manage.py", "demo", "--no-serve", "--rounds", "1", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_demo_plays_a_round_robin_and_prints_a_leaderboard_on_embedded_defaults(tmp_path):
    unset = ("DATABASE_URL", "REDIS_URL", EMBEDDED_NOTED)
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    result = run_demo(env)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "through in-process tasks" in out
    assert "hello ok, active" in out and "FAILED" not in out
    board = out.split("Leaderboard of oh-hell")[1].strip().splitlines()[1:]
    assert len(board) == 6
    assert "embedded defaults" in result.stderr

    # A second start shows the same results instead of adding a tournament (ratings would stack).
    again = run_demo(env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Demo cup 1 was played before" in again.stdout
    assert "Playing a round robin" not in again.stdout
    assert again.stdout.split("Leaderboard of oh-hell")[1] == out.split("Leaderboard of oh-hell")[1]
