"""The README's first command: the demo plays a tournament end to end on embedded defaults."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

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


@pytest.fixture
def embedded_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Embedded defaults on a fresh SQLite file, with a real local worker as ./run starts."""
    unset = ("DATABASE_URL", "REDIS_URL", "CELERY_EAGER", EMBEDDED_NOTED)
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    worker = subprocess.Popen(
        [
            *(sys.executable, "-m", "celery", "-A", "config", "worker"),
            *("--pool", "threads", "-c", "8"),
            *("--loglevel", "WARNING", "--without-gossip", "--without-mingle"),
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env={**env, "BOT_ALLOW_LOOPBACK": "1"},
        start_new_session=True,
    )
    try:
        yield env
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


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
