"""The JavaScript starter bot, written to the protocol page alone, is registered through the
API, verified by a worker and plays rated ladder matches without a fault (real Node.js, real
Celery workers, Redis and PostgreSQL)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.users import client_for, make_confirmed_user
from tests.support.workers import needs_postgres_and_redis, wait_for
from tournaments.models import (
    Bot,
    BotStatus,
    MatchSeat,
    MatchStatus,
    RatingHistory,
    SharedHost,
)
from tournaments.services.ladders import ladder_ensure_default

NODE = shutil.which("node")
if NODE is None:
    pytest.skip(
        "node is not on PATH: the JavaScript starter bot on the ladder is NOT tested",
        allow_module_level=True,
    )

STARTER = Path(__file__).resolve().parents[3] / "examples" / "starter_bot.js"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def js_bot_port() -> Iterator[tuple[int, list[subprocess.Popen]]]:
    """A free port for the starter, and the list its process goes in to be stopped."""
    processes: list[subprocess.Popen] = []
    yield _free_port(), processes
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


def _rated_ladder_seats(bot: Bot) -> list[MatchSeat]:
    return list(
        MatchSeat.objects.filter(
            bot=bot,
            match__ladder__isnull=False,
            match__status=MatchStatus.FINISHED,
            match__rated=True,
        )
    )


def test_the_javascript_starter_bot_plays_rated_ladder_matches_through_real_workers(
    presets, make_bot, example_bots, loopback_allowed, start_worker, js_bot_port
) -> None:
    port, processes = js_bot_port
    ladder_ensure_default()
    # Every bot here runs on 127.0.0.1; a course server would be listed the same way.
    SharedHost.objects.create(address="127.0.0.1", note="the test's bots")
    for i, player in enumerate(("heuristic", "random", "heuristic")):
        make_bot(
            make_confirmed_user(f"regular-{i}"),
            endpoint_url=f"{example_bots.urls[player]}/regular-{i}",
            status=BotStatus.ACTIVE,
            ladder_opt_in=True,
        )
    start_worker("all", concurrency=2, env={"LADDER_MATCHES_IN_FLIGHT": "1"})
    start_worker("beat", beat=True)

    author = client_for(make_confirmed_user("js-author"))
    response = author.post(
        "/api/bots/",
        {"name": "js-starter", "endpoint_url": f"http://127.0.0.1:{port}/", "ladder_opt_in": True},
        format="json",
    )
    assert response.status_code == 201, response.content
    bot_id, secret = response.json()["id"], response.json()["secret"]
    # Started as its header says, with the secret the registration answered once.
    starter = subprocess.Popen(
        [str(NODE), str(STARTER), "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "OHHELL_SECRET": secret},
    )
    processes.append(starter)
    assert starter.stdout is not None
    assert "(checking signatures)" in starter.stdout.readline()
    assert author.post(f"/api/bots/{bot_id}/verify/").status_code == 202

    wait_for(lambda: Bot.objects.get(pk=bot_id).status == BotStatus.ACTIVE, 120, "verification")
    wait_for(lambda: len(_rated_ladder_seats(Bot(pk=bot_id))) >= 2, 300, "rated ladder matches")
    seats = _rated_ladder_seats(Bot(pk=bot_id))
    assert all(seat.faults == 0 and not seat.disqualified for seat in seats)
    assert RatingHistory.objects.filter(bot_id=bot_id).count() >= 2
