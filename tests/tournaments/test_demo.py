"""The README's first command: the demo plays a tournament end to end on embedded defaults."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tournaments import workers
from tests.tournaments.workers import ROOT


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


@pytest.fixture
def embedded_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Embedded defaults on a fresh SQLite file, with a real local worker as ./run starts."""
    env = workers.embedded_env(tmp_path / "demo.sqlite3")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    log = tmp_path / "worker.log"
    with workers.local_worker({**env, "BOT_ALLOW_LOOPBACK": "1"}, log) as worker:
        yield env
        assert worker.poll() is None, f"the local worker died:\n{log.read_text()[-3000:]}"


def test_the_demo_plays_a_round_robin_and_prints_a_leaderboard_on_embedded_defaults(embedded_env):
    env = embedded_env
    result = run_demo(env)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "through a local Celery worker" in out
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
