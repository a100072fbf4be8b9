"""Fixtures for the Django app's tests: cache isolation and scripted bots on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from django.conf import settings

from tests.support.loops import LoopServers
from tests.support.scripted_bot import ScriptedBot
from tests.support.workers import ROOT, database_url


@pytest.fixture(autouse=True)
def _isolated_cache(settings) -> None:
    """Give each test its own cache key space, so throttle counts never leak between tests."""
    caches = {name: dict(conf) for name, conf in settings.CACHES.items()}
    for conf in caches.values():
        conf["KEY_PREFIX"] = f"test-{uuid.uuid4().hex}"
    settings.CACHES = caches


@pytest.fixture(scope="session")
def scripted_bot_server() -> Iterator[str]:
    """Serve ScriptedBot on a free loopback port; yield its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedBot)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def loopback_allowed(settings) -> None:
    """Let bots live on loopback, as in development."""
    settings.BOT_ALLOW_LOOPBACK = True


@dataclass(frozen=True)
class Arrival:
    """A message to a bot under /record/: the match it is about and when it came (monotonic)."""

    match_id: str
    at: float


class ExampleBots(LoopServers):
    """Reference players served over real HTTP on loopback, as registered bots would be."""

    def __init__(self, players: tuple[str, ...] = ("heuristic", "random")) -> None:
        super().__init__()
        self.players = players
        self.urls: dict[str, str] = {}
        self._runners: list = []
        # Called (in a side thread) before a bot under /hook/ answers, when a test sets it.
        self.before_answer: Callable[[], None] | None = None
        # The messages sent to bots under /record/, in the order they came; tests clear it.
        self.recorded: list[dict] = []
        # When each of those messages came, and for which match; tests clear it too.
        self.arrivals: list[Arrival] = []

    async def _start(self) -> None:
        import asyncio

        from aiohttp import web

        from arena.botserver import make_app

        @web.middleware
        async def slow_paths(request, handler):
            # Paths under /slow/ think for a while, so a match lasts long enough to interrupt.
            if "/record/" in request.path:
                message = await request.json()
                self.recorded.append(message)
                self.arrivals.append(Arrival(str(message.get("match_id")), time.monotonic()))
            if request.path.startswith("/slow/"):
                await asyncio.sleep(0.15)
            hook = self.before_answer
            if request.path.startswith("/hook/") and hook is not None:
                await asyncio.get_running_loop().run_in_executor(None, hook)
            return await handler(request)

        for name in self.players:
            app = make_app(name, seed=7)
            app.middlewares.append(slow_paths)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = runner.addresses[0][1]  # the port the system picked
            self.urls[name] = f"http://127.0.0.1:{port}"
            self._runners.append(runner)

    async def _stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()


@pytest.fixture(scope="session")
def example_bots() -> Iterator[ExampleBots]:
    """Start the heuristic and random example bots once for the session."""
    with ExampleBots() as bots:
        yield bots


@pytest.fixture
def playing_bots(make_bot, owner, example_bots, loopback_allowed):
    """Make ``n`` active bots served by the example bots (alternating players), whose owner
    accepts invitations to tournaments."""

    def make(n: int, players: tuple[str, ...] = ("heuristic", "random")) -> list:
        bots = []
        for i in range(n):
            player = players[i % len(players)]
            bots.append(
                make_bot(
                    owner,
                    endpoint_url=f"{example_bots.urls[player]}/b{i}",
                    status="active",
                    accept_invitations=True,
                )
            )
        return bots

    return make


@pytest.fixture
def short_variant(db):
    """A variant of at most three cards a deal, for matches that end quickly."""
    from tests.support.users import make_user
    from tournaments.services.variants import variant_create

    creator = make_user("variant-maker", is_staff=True)
    return variant_create(
        user=creator,
        name="short-oh-hell",
        base="oh-hell",
        options={"max_cards": 3, "order": "down"},
    )


@pytest.fixture
def queue(settings) -> str:
    """A private queue, so no other worker on this machine takes the test's tasks.

    Set as the Django setting, which the Celery app reads (config/celery_app.py), so the
    routing of every task sent by the test follows it.
    """
    name = f"test-{uuid.uuid4().hex[:10]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = name
    return name


def _worker_env(queue: str, extra: dict[str, str] | None) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
        "BOT_ALLOW_LOOPBACK": "1",
        "DB_CONN_MAX_AGE": "0",
        **(extra or {}),
    }


@pytest.fixture
def start_worker(queue: str, tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """Start Celery workers (and beat) on the test database and queues; stop them afterwards.

    A worker consumes all of the test's queues, as one started without -Q does, unless
    ``queues`` names some: "" for control tasks, ".matches", ".ladder", ".bulk". ``pool``
    chooses the execution pool ("prefork", Celery's default, or "threads"). ``as_deployed``
    keeps gossip, mingle and the worker heartbeat on, as the commands in docker/compose.yaml
    and the README do; otherwise they are off, so a test's workers start faster. ``args`` are
    added to a worker's command line.
    """
    processes: list[subprocess.Popen] = []

    def start(
        name: str,
        concurrency: int = 2,
        *,
        queues: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
        beat: bool = False,
        pool: str = "prefork",
        as_deployed: bool = False,
        args: Sequence[str] = (),
    ) -> subprocess.Popen:
        command = [sys.executable, "-m", "celery", "-A", "config"]
        if beat:
            command += ["beat", "-s", str(tmp_path / f"beat-{name}"), "--loglevel", "WARNING"]
        else:
            command += ["worker", "-n", f"{name}-{queue}@%h", "-c", str(concurrency)]
            command += ["--pool", pool, "--loglevel", "WARNING"]
            if not as_deployed:
                command += ["--without-gossip", "--without-mingle"]
            if queues is not None:
                command += ["-Q", ",".join(f"{queue}{suffix}" for suffix in queues)]
            command += args
        process = subprocess.Popen(
            command, cwd=ROOT, env=_worker_env(queue, env), start_new_session=True
        )
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
