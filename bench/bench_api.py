"""Throughput and latency of the bot and variant list endpoints, served by gunicorn.

Loads 10,000 bots into a fresh PostgreSQL database, then for each database connection mode
(persistent: DB_CONN_MAX_AGE=600, per request: DB_CONN_MAX_AGE=0) starts gunicorn with 2 workers
on loopback and drives GET /api/bots/ and GET /api/variants/ with a keep-alive load generator
(threads, one connection each). Also counts SQL queries per list request at several page sizes.

    .venv/bin/python bench/bench_api.py [--seconds 8] [--connections 4] [--bots 10000]

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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


def start_gunicorn(conn_max_age: int) -> subprocess.Popen:
    """Start gunicorn with 2 sync workers and wait until it answers."""
    env = {**BASE_ENV, "DB_CONN_MAX_AGE": str(conn_max_age)}
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.wsgi",
        "--workers",
        "2",
        "--bind",
        f"127.0.0.1:{PORT}",
        "--log-level",
        "warning",
    ]
    server = subprocess.Popen(command, env=env, cwd=ROOT)
    for _ in range(100):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=1)
            conn.request("GET", "/api/")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise RuntimeError("gunicorn did not start")


def load(
    path: str | Callable[[random.Random], str], seconds: float, connections: int
) -> tuple[float, float, float, int]:
    """Drive one endpoint; return requests per second, p50 and p99 latency in ms, errors.

    ``path`` is a fixed path, or a function drawing each request's path from a seeded RNG.
    """
    make = path if callable(path) else lambda _rng: path
    latencies: list[list[float]] = [[] for _ in range(connections)]
    errors = [0] * connections
    stop = time.perf_counter() + seconds

    def worker(i: int) -> None:
        rng = random.Random(i)
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
        while time.perf_counter() < stop:
            path = make(rng)
            started = time.perf_counter()
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
    return len(every) / elapsed, statistics.median(every), p99, sum(errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--bots", type=int, default=10_000)
    args = parser.parse_args()

    prepare_database(args.bots)
    print(f"{args.bots} bots loaded; queries per list request by page size:")
    for url, sizes in count_queries().items():
        print(f"  {url:16} " + "  ".join(f"page_size={s}: {n}" for s, n in sizes.items()))
    print(
        f"\ngunicorn, 2 workers; {args.connections} keep-alive connections,"
        f" {args.seconds:.0f} s per measurement"
    )
    header = ("endpoint", "DB_CONN_MAX_AGE", "req/s", "p50 ms", "p99 ms", "errors")
    print("{:16} {:>15} {:>8} {:>8} {:>8} {:>6}".format(*header))
    for conn_max_age in (600, 0):
        server = start_gunicorn(conn_max_age)
        try:
            for path in ENDPOINTS:
                load(path, 1.0, args.connections)  # warm-up
                rps, p50, p99, errors = load(path, args.seconds, args.connections)
                print(
                    f"{path:16} {conn_max_age:>15} {rps:>8.0f} {p50:>8.2f} {p99:>8.2f} {errors:>6}"
                )
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
