"""One owner's verification while another owner floods the checks: fair backlogs against none.

Run: nice -n 10 .venv/bin/python -m bench.bench_checks [--rounds 3] [--flood 20]
    [--slow-ms 2900] [--concurrency 4]

Needs PostgreSQL (``DATABASE_URL``, migrated here if need be) and Redis (``REDIS_URL``). One
real Celery worker (``-P threads -c --concurrency``) on a private queue per run. The bots are
one HTTP server on loopback: the flood's ``--flood`` bots answer every request (``hello`` and
the signing probes) after ``--slow-ms`` (just under the 3 s hello timeout, as slow bots do), the
other owner's bot at once.

Each round runs three arms, in an order rotated by round:

- ``alone``: the other owner asks for one verification, nothing else queued (the anchor);
- ``fair``: the flood's owner first asks for a verification of each of its bots, then the other
  owner asks for one; ``CHECKS_IN_FLIGHT_PER_OWNER`` 2 (the default);
- ``unbounded``: the same with ``CHECKS_IN_FLIGHT_PER_OWNER`` 100, so every check is sent as
  asked, first come first served, as before the owners' backlogs.

The figure is the other owner's latency, from its request to its check's outcome in the
database (polled every 20 ms): medians and ranges over rounds, and each flood arm's ratio to
the alone arm of the same round. Between arms the worker is stopped and the checks left pending
are deleted, so no arm inherits another's backlog.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bench.support.processes import ROOT

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ["BOT_ALLOW_LOOPBACK"] = "1"

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402

from tournaments.models import Bot, BotHealthCheck  # noqa: E402
from tournaments.services.bots import bot_verify_request  # noqa: E402

ARMS = ("alone", "fair", "unbounded")
PLACES = {"alone": 2, "fair": 2, "unbounded": 100}


def serve_bots(slow_s: float) -> tuple[ThreadingHTTPServer, str]:
    """The bots of the bench: ``/flood/<n>`` answer every request (hello and the signing
    probes, all ``hello`` messages) after ``slow_s``; ``/other`` at once."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path.startswith("/flood/"):
                time.sleep(slow_s)
            answer = json.dumps({"name": "bench"}).encode()
            # A call the arena gave up on (its time limit, or its worker stopped) has no reader.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def bots_of(name: str, urls: list[str]) -> list[Bot]:
    """The owner ``name`` with one bot per URL, made afresh."""
    owner, _ = User.objects.get_or_create(username=f"bench-checks-{name}")
    Bot.objects.filter(owner=owner).delete()
    return [
        Bot.objects.create(
            owner=owner,
            name=f"bench-checks-{name}-{n}",
            endpoint_url=url,
            secret=f"secret-{name}-{n}",
        )
        for n, url in enumerate(urls)
    ]


def start_worker(queue: str, places: int, concurrency: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "CELERY_QUEUE": queue,
        "CHECKS_IN_FLIGHT_PER_OWNER": str(places),
        "DB_CONN_MAX_AGE": "0",
    }
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "threads"),
            *("-c", str(concurrency), "--loglevel", "ERROR", "--without-gossip"),
            *("--without-mingle", "--without-heartbeat", "-n", f"{queue}@%h"),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(worker: subprocess.Popen[bytes]) -> None:
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)


def wait_until(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.02)


@dataclass(frozen=True)
class Setup:
    flood: list[Bot]
    other: Bot
    concurrency: int


def run_arm(arm: str, setup: Setup) -> float:
    """The other owner's verification latency in seconds under ``arm``."""
    queue = f"bench-checks-{uuid.uuid4().hex[:8]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    settings.CHECKS_IN_FLIGHT_PER_OWNER = PLACES[arm]
    worker = start_worker(queue, PLACES[arm], setup.concurrency)
    try:
        # A warm-up check shows the worker is consuming before the clock starts.
        warm = bot_verify_request(bot=setup.other, counted=False)
        wait_until(lambda: BotHealthCheck.objects.get(pk=warm.pk).ok is not None, 120)
        if arm != "alone":
            for bot in setup.flood:
                bot_verify_request(bot=bot, counted=False)
        started = time.monotonic()
        check = bot_verify_request(bot=setup.other, counted=False)
        wait_until(lambda: BotHealthCheck.objects.get(pk=check.pk).ok is not None, 600)
        return time.monotonic() - started
    finally:
        stop(worker)
        BotHealthCheck.objects.filter(ok__isnull=True).delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--flood", type=int, default=20)
    parser.add_argument("--slow-ms", type=int, default=2900)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    if not settings.REDIS_URL or "postgres" not in str(settings.DATABASES["default"]["ENGINE"]):
        raise SystemExit("needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    call_command("migrate", verbosity=0)
    server, base = serve_bots(args.slow_ms / 1000)
    setup = Setup(
        flood=bots_of("flood", [f"{base}/flood/{n}" for n in range(args.flood)]),
        other=bots_of("other", [f"{base}/other"])[0],
        concurrency=args.concurrency,
    )
    results: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for round_no in range(args.rounds):
        order = ARMS[round_no % 3 :] + ARMS[: round_no % 3]
        for arm in order:
            results[arm].append(run_arm(arm, setup))
        print(f"round {round_no + 1}: " + ", ".join(f"{a} {results[a][-1]:.2f} s" for a in ARMS))
    server.shutdown()
    print(f"\n{args.flood} flood bots, hello {args.slow_ms} ms, worker -c {args.concurrency}")
    for arm in ARMS:
        values = results[arm]
        ratios = [v / a for v, a in zip(values, results["alone"], strict=True)]
        print(
            f"{arm:>9}: median {statistics.median(values):.2f} s "
            f"({min(values):.2f}-{max(values):.2f}), x alone {statistics.median(ratios):.1f} "
            f"({min(ratios):.1f}-{max(ratios):.1f})"
        )


if __name__ == "__main__":
    main()
