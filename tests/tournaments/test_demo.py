"""The README's first command: the demo plays a tournament end to end on embedded defaults."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import workers
from tests.support.workers import ROOT


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


def statuses(env: dict[str, str], paths: list[str]) -> dict[str, int]:
    """GET each path through Django's test client on the database ``env`` names."""
    script = (
        "import json; from django.test import Client; client = Client(HTTP_HOST='127.0.0.1'); "
        f"print(json.dumps({{path: client.get(path).status_code for path in {paths!r}}}))"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture
def embedded_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Embedded defaults on a fresh SQLite file, with a real local worker as ./run starts."""
    env = workers.embedded_env(tmp_path / "demo.sqlite3")
    workers.migrate(env)
    log = tmp_path / "worker.log"
    with workers.local_worker({**env, "BOT_ALLOW_LOOPBACK": "1"}, log) as worker:
        yield env
        assert worker.poll() is None, f"the local worker died:\n{log.read_text()[-3000:]}"


def test_the_demo_plays_a_round_robin_and_prints_a_leaderboard_on_embedded_defaults(
    embedded_env,
) -> None:
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

    # The rating pages read the played demo's SQLite database as they read PostgreSQL.
    past = "99999999999999999999"
    ok = [
        "/api/leaderboard/?variant=oh-hell",
        "/api/leaderboard/?variant=oh-hell&format=api",
        "/api/bots/1/rating-history/",
        "/api/bots/1/rating-history/?variant=oh-hell&at=2099-01-01T00:00:00Z",
        "/api/bots/1/ratings/?at=2099-01-01T00:00:00Z",
        "/leaderboard/oh-hell/",
    ]
    missing = [f"/api/bots/{past}/ratings/", f"/api/bots/{past}/rating-history/"]
    assert statuses(env, ok + missing) == {**dict.fromkeys(ok, 200), **dict.fromkeys(missing, 404)}


@pytest.mark.django_db
def test_the_reference_bots_each_have_an_owner_and_can_fill_ladder_tables_together(
    presets, loopback_allowed, settings
) -> None:
    from tournaments.demo import BotHost, register_roster, roster_on_ladders
    from tournaments.models import SharedHost
    from tournaments.services.ladders import ladders_top_up

    settings.LADDER_MATCHES_IN_FLIGHT = 1
    host = BotHost().start()
    try:
        bots = register_roster(host.urls, lambda line: None)
        assert len(bots) == 6 and len({bot.owner_id for bot in bots}) == 6
        assert all(bot.endpoint_addresses == ["127.0.0.1"] for bot in bots)
        roster_on_ladders(bots, on=True)  # more bots than one account may opt in
        assert SharedHost.objects.filter(address="127.0.0.1").exists()
        assert ladders_top_up() == 1
    finally:
        host.stop()


def test_the_closing_lines_say_where_the_api_docs_are_and_how_to_make_an_admin() -> None:
    from tournaments.management.commands.demo import closing_lines

    lines = closing_lines(port=8001, tournament_id=3)
    assert lines[:2] == [
        "Dashboard: http://127.0.0.1:8001/",
        "Tournament: http://127.0.0.1:8001/tournaments/3/",
    ]
    assert "interactive docs: http://127.0.0.1:8001/api/docs/" in lines[2]
    assert lines[3].startswith("Admin: http://127.0.0.1:8001/admin/")
    assert lines[3].endswith("python manage.py createsuperuser)")
    assert not any("Tournament" in line for line in closing_lines(port=1, tournament_id=None))


def test_serving_only_registers_the_reference_bots_and_plays_no_tournament(embedded_env) -> None:
    result = run_demo(embedded_env, "--serve-only")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "hello ok, active" in result.stdout
    assert "Playing a round robin" not in result.stdout
    assert "Leaderboard" not in result.stdout
