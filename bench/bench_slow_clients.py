"""Whether the site answers while slow clients and heavy downloaders are at it.

gunicorn (sync workers, --workers 2, as docker/compose.yaml runs it) with and without the
shipped nginx (docker/nginx.conf, run as tests/support/reverse_proxy.py runs it: only the upstream
address and the listen port changed) in front, on loopback. In each round, against one of
the two:

- ``--slow`` connections (default 50) each send one more header line every 2 s, never ending
  their request, and are opened again when the server closes them;
- ``--downloaders`` clients (default 2) download the OpenAPI schema (/api/schema/, the largest
  and slowest answer the site gives without an account) again and again;
- one prober GETs /api/health/ and /api/leaderboard/?variant=oh-hell in turn, one at a time,
  each on a new connection, each given up after 5 s (a failure).

Rounds alternate proxy and bare gunicorn in pairs (ABBA), each ``--seconds`` long; figures are
the median over rounds with the range in brackets.

    .venv/bin/python -m bench.bench_slow_clients [--rounds 4] [--seconds 15] [--slow 50]
        [--downloaders 2]

Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth) and Debian's nginx; uses the
database ohhell_bench_slow_clients (migrated, presets seeded) and drops it at the end.
"""

from __future__ import annotations

import argparse
import http.client
import math
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from enum import Enum

from bench.support.processes import ROOT
from tests.support.reverse_proxy import SlowClients, find_nginx, free_port, nginx, probe

DB_NAME = "ohhell_bench_slow_clients"
ENV = {
    **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
    "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
    "DEBUG": "0",
    "SECRET_KEY": "bench-only-secret-key-" + "x" * 30,
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "LOG_LEVEL": "warning",
    # No broker here: the measured requests queue nothing, and DEBUG off needs one or this.
    "CELERY_EAGER": "1",
}
PROBED = ("/api/health/", "/api/leaderboard/?variant=oh-hell")
DOWNLOAD = "/api/schema/"
PROBE_TIMEOUT = 5.0


class Target(Enum):
    """What the clients connect to."""

    PROXY = "nginx in front of gunicorn"
    BARE = "bare gunicorn"


def manage(*args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], env=ENV, cwd=ROOT, check=True)


def psql(sql: str) -> None:
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", sql], check=True)


@contextmanager
def gunicorn() -> Iterator[int]:
    """gunicorn as compose runs it (sync, 2 workers) on a free loopback port; yields the port."""
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "config.wsgi", "--workers", "2"]
    command += ["--bind", f"127.0.0.1:{port}", "--log-level", "error", "--no-control-socket"]
    process = subprocess.Popen(command, env=ENV, cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while probe(port, PROBED[0], PROBE_TIMEOUT).status != 200:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not start")
            time.sleep(0.2)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


class Downloader:
    """Downloads ``DOWNLOAD`` in a loop until stopped, counting the bytes it got."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                conn.request("GET", DOWNLOAD)
                self.bytes += len(conn.getresponse().read())
            except OSError:
                time.sleep(0.1)
            finally:
                conn.close()

    def __enter__(self) -> Downloader:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)


@dataclass(frozen=True)
class Round:
    """One round's probes of one path: answers' seconds and failures, and the load it met."""

    seconds: list[float]
    failures: int
    downloaded: int

    def percentile(self, q: float) -> float:
        """The ``q`` quantile of the answered probes (nearest rank), failures counted as slowest."""
        ranked = sorted(self.seconds) + [math.inf] * self.failures
        return ranked[max(0, math.ceil(q * len(ranked)) - 1)]


def run_round(port: int, args: argparse.Namespace) -> dict[str, Round]:
    """Slow clients and downloaders on ``port`` while the prober probes, for ``args.seconds``."""
    answered: dict[str, list[float]] = {path: [] for path in PROBED}
    failed = dict.fromkeys(PROBED, 0)
    downloaders = [Downloader(port) for _ in range(args.downloaders)]
    with SlowClients(port, args.slow), ExitStack() as stack:
        for downloader in downloaders:
            stack.enter_context(downloader)
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            for path in PROBED:
                result = probe(port, path, PROBE_TIMEOUT)
                if result.status == 200:
                    answered[path].append(result.seconds)
                else:
                    failed[path] += 1
            time.sleep(0.05)
    downloaded = sum(d.bytes for d in downloaders)
    return {path: Round(answered[path], failed[path], downloaded) for path in PROBED}


def ms(value: float) -> str:
    return "timeout" if math.isinf(value) else f"{value * 1000:,.0f}"


def summary(values: list[float]) -> str:
    return f"{ms(statistics.median(values))} ({ms(min(values))}-{ms(max(values))})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4, help="rounds per target (even: ABBA)")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--slow", type=int, default=50)
    parser.add_argument("--downloaders", type=int, default=2)
    args = parser.parse_args()
    if find_nginx() is None:
        sys.exit("bench: nginx is needed (apt-get install --no-install-recommends nginx)")

    psql(f"DROP DATABASE IF EXISTS {DB_NAME}")
    psql(f"CREATE DATABASE {DB_NAME}")
    try:
        manage("migrate", "--no-input", "-v", "0")
        manage("seed_presets")
        results: dict[Target, list[dict[str, Round]]] = {t: [] for t in Target}
        order = [Target.PROXY, Target.BARE, Target.BARE, Target.PROXY]
        for i in range(args.rounds * 2):
            target = order[i % 4]
            # A fresh gunicorn each round, so a round never starts with workers still held.
            with gunicorn() as upstream:
                if target is Target.PROXY:
                    with nginx(upstream) as port:
                        results[target].append(run_round(port, args))
                else:
                    results[target].append(run_round(upstream, args))
            print(f"bench: round {i + 1}/{args.rounds * 2} ({target.value}) done", file=sys.stderr)
    finally:
        psql(f"DROP DATABASE IF EXISTS {DB_NAME}")

    print(
        f"\n{args.slow} slow clients (a header line every 2 s), {args.downloaders} downloaders "
        f"of {DOWNLOAD}; {args.rounds} rounds of {args.seconds:g} s per target, ABBA; "
        f"probes given up after {PROBE_TIMEOUT:g} s\n"
    )
    print(
        "| target | probed | probes/round | p50 ms | p99 ms | failed/round | downloaded MB/round |"
    )
    print("|---|---|---|---|---|---|---|")
    for target in Target:
        for path in PROBED:
            rounds = [r[path] for r in results[target]]
            counts = [float(len(r.seconds) + r.failures) for r in rounds]
            print(
                f"| {target.value} | `{path}` | {statistics.median(counts):.0f} "
                f"| {summary([r.percentile(0.5) for r in rounds])} "
                f"| {summary([r.percentile(0.99) for r in rounds])} "
                f"| {statistics.median([r.failures for r in rounds]):g} "
                f"({min(r.failures for r in rounds)}-{max(r.failures for r in rounds)}) "
                f"| {statistics.median([r.downloaded / 1e6 for r in rounds]):.1f} |"
            )


if __name__ == "__main__":
    main()
