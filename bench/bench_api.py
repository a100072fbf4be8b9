"""Throughput and latency of the bot and variant list endpoints, served by gunicorn.

Loads 10,000 bots into a fresh PostgreSQL database, then for each database connection mode
(pooled, the default: DB_POOL_MAX_SIZE=10; persistent: no pool, DB_CONN_MAX_AGE=600; per
request: no pool, DB_CONN_MAX_AGE=0) starts gunicorn with 2 gthread
workers on loopback and drives GET /api/bots/ and GET /api/variants/ with a keep-alive load
generator (threads, one connection each; it counts the connections it had to open), in paired
rounds against an anchor on the same server, GET /api/health/ (a DRF view with no database
work): each round measures both, in ABBA order, and the table gives medians of the rounds and
the spread of the endpoint/anchor ratio. Also counts SQL queries per list request.

    .venv/bin/python -m bench.bench_api [--seconds 3] [--rounds 5] [--connections 4] [--bots 10000]

Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth); uses the database ohhell_bench.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.support.processes import ROOT

DB_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ohhell_bench")
PORT = 8765
ENDPOINTS = ["/api/bots/", "/api/variants/"]
BASE_ENV = {
    **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
    "DATABASE_URL": DB_URL,
    "DEBUG": "0",
    "SECRET_KEY": "bench-only-secret-key-" + "x" * 30,
    "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
    "LOG_LEVEL": "warning",
    "DJANGO_SETTINGS_MODULE": "config.settings",
    # No broker here: the measured requests queue nothing, and DEBUG off needs one or this.
    "CELERY_EAGER": "1",
}


def prepare_database(bots: int) -> None:
    """Recreate the bench database, migrate it and load the bots."""
    name = DB_URL.rsplit("/", 1)[1]
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c"]
    subprocess.run([*psql, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True)
    subprocess.run([*psql, f"CREATE DATABASE {name}"], check=True)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v", "0"], env=BASE_ENV, check=True, cwd=ROOT)
    code = f"""
import django; django.setup()
from django.contrib.auth.models import User
from tournaments.models import Bot
owners = User.objects.bulk_create([User(username=f"owner{{i}}") for i in range(100)])
Bot.objects.bulk_create(
    [Bot(owner=owners[i % 100], name=f"bot-{{i:05d}}", endpoint_url=f"https://b{{i}}.example.org/",
         secret=f"s{{i}}", status="active") for i in range({bots})],
    batch_size=2000,
)
"""
    subprocess.run([sys.executable, "-c", code], env=BASE_ENV, check=True, cwd=ROOT)
    subprocess.run([*psql, "ANALYZE", name], check=False)


def count_queries() -> dict[str, dict[int, int]]:
    """SQL queries per list request, by page size, counted in a separate process."""
    code = """
import django, json; django.setup()
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
client, out = Client(HTTP_HOST="127.0.0.1"), {}
for url in ("/api/bots/", "/api/variants/"):
    out[url] = {}
    for size in (10, 50, 200):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"{url}?page_size={size}").status_code == 200
        out[url][size] = len(queries)
print(json.dumps(out))
"""
    env = {**BASE_ENV, "DEBUG": "1"}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, cwd=ROOT, capture_output=True, text=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


ANCHOR = "/api/health/"  # a trivial DRF view on the same server: no database, no session


# Each connection mode as the settings read it (config/settings.py).
MODES = {
    "pooled (DB_POOL_MAX_SIZE=10)": {"DB_POOL_MAX_SIZE": "10"},
    "persistent (DB_POOL_MAX_SIZE=0, DB_CONN_MAX_AGE=600)": {
        "DB_POOL_MAX_SIZE": "0",
        "DB_CONN_MAX_AGE": "600",
    },
    "per request (DB_POOL_MAX_SIZE=0, DB_CONN_MAX_AGE=0)": {
        "DB_POOL_MAX_SIZE": "0",
        "DB_CONN_MAX_AGE": "0",
    },
}


def start_gunicorn(
    mode: dict[str, str], extra_env: dict[str, str] | None = None
) -> subprocess.Popen:
    """Start gunicorn with 2 threaded workers (they keep connections alive) and wait for it.

    Sync workers close every connection after one response, so a "keep-alive" client would
    reconnect for each request; gthread workers keep them open (``load`` counts reconnects).
    """
    env = {**BASE_ENV, **mode, **(extra_env or {})}
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.wsgi",
        *("--workers", "2", "--worker-class", "gthread", "--threads", "4"),
        *("--keep-alive", "60", "--bind", f"127.0.0.1:{PORT}", "--log-level", "warning"),
        "--no-control-socket",
    ]
    server = subprocess.Popen(command, env=env, cwd=ROOT)
    for _ in range(100):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=1)
            conn.request("GET", ANCHOR)
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise RuntimeError("gunicorn did not start")


@dataclass
class Run:
    """One measurement of one endpoint."""

    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    connects: int  # connections opened (keep-alive: one per client connection)


def load(path: str | Callable[[random.Random], str], seconds: float, connections: int) -> Run:
    """Drive one endpoint from ``connections`` keep-alive clients for ``seconds``.

    ``path`` is a fixed path, or a function drawing each request's path from a seeded RNG.
    """
    make = path if callable(path) else lambda _rng: path
    latencies: list[list[float]] = [[] for _ in range(connections)]
    errors = [0] * connections
    connects = [0] * connections
    stop = time.perf_counter() + seconds

    def worker(i: int) -> None:
        rng = random.Random(i)
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
        while time.perf_counter() < stop:
            path = make(rng)
            started = time.perf_counter()
            if conn.sock is None:
                connects[i] += 1  # http.client opens a new connection when the last closed
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    errors[i] += 1
            except (OSError, http.client.HTTPException):
                errors[i] += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
                continue
            latencies[i].append((time.perf_counter() - started) * 1000)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    begun = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - begun
    every = sorted(x for per in latencies for x in per)
    p99 = every[min(len(every) - 1, int(len(every) * 0.99))]
    return Run(len(every) / elapsed, statistics.median(every), p99, sum(errors), sum(connects))


@dataclass
class Paired:
    """Paired rounds of an anchor and an endpoint, measured one after the other each round."""

    anchor: list[Run]
    endpoint: list[Run]

    @property
    def ratios(self) -> list[float]:
        """Endpoint throughput over the anchor's, round by round."""
        return [e.rps / a.rps for a, e in zip(self.anchor, self.endpoint, strict=True)]

    def row(self, label: str) -> str:
        """A markdown table row: medians, the ratio's median and spread (min-max)."""
        ratios = self.ratios

        def median(runs: list[Run], field: str) -> float:
            return statistics.median(getattr(r, field) for r in runs)

        errors = sum(r.errors for r in self.anchor + self.endpoint)
        connects = max(r.connects for r in self.anchor + self.endpoint)
        return (
            f"| {label} | {median(self.anchor, 'rps'):.0f} | {median(self.endpoint, 'rps'):.0f} |"
            f" {statistics.median(ratios):.2f}x | {min(ratios):.2f}-{max(ratios):.2f} |"
            f" {median(self.endpoint, 'p50_ms'):.2f} | {median(self.endpoint, 'p99_ms'):.2f} |"
            f" {errors} | {connects} |"
        )


PAIRED_HEADER = (
    "| endpoint | anchor req/s | endpoint req/s | ratio (median) | ratio min-max | p50 ms |"
    " p99 ms | errors | connections opened |\n|---|---|---|---|---|---|---|---|---|"
)


def paired(
    path: str | Callable[[random.Random], str], rounds: int, seconds: float, connections: int
) -> Paired:
    """Measure the anchor and ``path`` in ``rounds`` interleaved pairs (ABBA order)."""
    load(ANCHOR, 0.5, connections)  # warm-up of both
    load(path, 0.5, connections)
    out = Paired([], [])
    for r in range(rounds):
        if r % 2 == 0:
            out.anchor.append(load(ANCHOR, seconds, connections))
            out.endpoint.append(load(path, seconds, connections))
        else:
            out.endpoint.append(load(path, seconds, connections))
            out.anchor.append(load(ANCHOR, seconds, connections))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds per endpoint")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--bots", type=int, default=10_000)
    args = parser.parse_args()

    prepare_database(args.bots)
    print(f"{args.bots} bots loaded; queries per list request by page size:")
    for url, sizes in count_queries().items():
        print(f"  {url:16} " + "  ".join(f"page_size={s}: {n}" for s, n in sizes.items()))
    print(
        f"\ngunicorn, 2 gthread workers x 4 threads; {args.connections} keep-alive connections;"
        f" {args.rounds} paired rounds of {args.seconds:.0f} s against {ANCHOR}"
    )
    for name, mode in MODES.items():
        print(f"\n{name}\n{PAIRED_HEADER}")
        server = start_gunicorn(mode)
        try:
            for path in ENDPOINTS:
                result = paired(path, args.rounds, args.seconds, args.connections)
                print(result.row(path), flush=True)
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
