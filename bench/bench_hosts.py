"""Celery workers on three "hosts" of their own: throughput per host count, and a cut link.

Run as root (network namespaces): .venv/bin/python -m bench.bench_hosts [--rounds 3]
    [--matches 48] [--concurrency 4] [--bot-delay-ms 50] [--cut-seconds 60] [--no-restore]

Each host is a network namespace with a veth pair to this (the root) namespace, on private
addresses (``plan_hosts``): 10.200.<i>.2/30 in host i, 10.200.<i>.1/30 on the root side. Every
service a host needs sits at one address, 10.200.0.1, added to the root namespace's loopback
device and routed from each host through its veth:

- PostgreSQL, through a small TCP forwarder (PostgreSQL itself listens on 127.0.0.1 only and is
  left as it is); the forwarder drops a connection whose host stopped answering (TCP
  keep-alive), so a cut host's open transactions are rolled back as on a real network;
- a private redis-server (broker and cache), bound to that address only;
- the bots: reference players (``arena.botserver.make_app``, player "random") that answer
  after ``--bot-delay-ms``, allowed through the project's own ``BOT_ALLOWED_NETWORKS``.

Each host runs one real ``celery -A config worker -P threads -c N`` consuming all three queues,
in a UTS namespace of its own with its own host name, so the claim tokens (``claimed_by``) say
which host played each match. Beat runs in the root namespace, next to the database.

Throughput: in each round, a round-robin tournament of ``--matches`` matches (a short variant,
3 deals of 3, 2 and 1 cards) is played with 1, 2 and 3 hosts in a rotating order; matches per
second from the tournament's start to its last result. The 1-host run of the same round is the
anchor of the 2- and 3-host runs; medians and ranges over rounds are printed, with CPU seconds
per match of the workers, database transactions and rows written, Redis commands and bot calls
per match, for the sizing note in bench/README.md.

The cut: three hosts play a duplicate tournament; when host 3 is in the middle of a match its
link goes down (``ip link set ... down``) for ``--cut-seconds`` (or for good, ``--no-restore``).
Then the database is checked: every match finished once, one replay each, one rating update per
rated unit (a match, or a duplicate group rated together), and the ratings and their history
equal a recompute (``ratings_recompute``), bit for bit.

Namespaces, the loopback address, the forwarder, redis-server, the bots and the workers are
removed on exit, on Ctrl-C and on SIGTERM. The database (``DATABASE_URL``, default
``ohhell_bench_hosts`` on 127.0.0.1:5432, created and migrated if missing) keeps the rows.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from bench.hosts import QUEUE, STALE_SECONDS
from bench.hosts.cast import Cast, cancel_leftovers, prepare_cast
from bench.hosts.cut import cut_run
from bench.hosts.hub import (
    Host,
    Queries,
    Services,
    ensure_database,
    hub_database_url,
    start_services,
)
from bench.hosts.throughput import report_throughput, throughput
from bench.support.netns import build_network, plan_hosts, teardown_network
from bench.support.processes import ROOT


def _on_signal(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="paired rounds of 1, 2, 3 hosts")
    parser.add_argument("--matches", type=int, default=48, help="matches a throughput run")
    parser.add_argument("--concurrency", type=int, default=4, help="threads per host worker")
    parser.add_argument("--bot-delay-ms", type=int, default=50)
    parser.add_argument("--cut-rounds", type=int, default=2, help="duplicate rounds (16 matches)")
    parser.add_argument("--cut-seconds", type=float, default=60.0)
    parser.add_argument("--no-restore", action="store_true", help="the cut link stays down")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-cut", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: network namespaces need it")
    for tool in ("ip", "unshare", "redis-server"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is needed")
    return args


def _environments(database_url: str, services: Services) -> tuple[dict[str, str], dict[str, str]]:
    """The environment of the processes in the root namespace, and of the hosts' workers."""
    hub = services.hub
    common = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "REDIS_URL": f"redis://{hub}:{services.redis_port}/0",
        "CELERY_QUEUE": QUEUE,
        "BOT_ALLOWED_NETWORKS": f"{hub}/32",
        "MATCH_STALE_SECONDS": str(STALE_SECONDS),
        # As deployed: DEBUG off (no query log kept in the workers).
        "DEBUG": "0",
        "SECRET_KEY": "bench-hosts-not-a-secret-but-long-enough-for-django-checks",
    }
    root_env = {**common, "DATABASE_URL": database_url}
    host_env = {**common, "DATABASE_URL": hub_database_url(database_url, hub, services.db_port)}
    return root_env, host_env


def _start_beat(env: dict[str, str], tmp: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "beat", "-s", str(tmp / "beat"),
         "--loglevel", "WARNING"],
        cwd=ROOT, env=env, start_new_session=True,
        stdout=(tmp / "beat.log").open("ab"), stderr=subprocess.STDOUT,
    )  # fmt: skip


def _prepare(services: Services) -> tuple[Cast, Queries]:
    """The platform's objects, set up in the root namespace, and the count of its own queries."""
    import django

    django.setup()
    from django.db import connection

    queries = Queries()
    connection.execute_wrappers.append(queries)
    cast = prepare_cast(services.hub, services.bot_port)
    if cancelled := cancel_leftovers():
        print(f"cancelled {cancelled} tournament(s) an interrupted run left going")
    return cast, queries


def _measure(
    hosts: list[Host], cast: Cast, services: Services, queries: Queries, args: argparse.Namespace
) -> None:
    if not args.skip_throughput:
        report_throughput(throughput(hosts, cast, services, queries, args), args)
    if not args.skip_cut:
        verdict, _ = cut_run(hosts, cast, args)
        print("\n".join(verdict.lines))
        print("exactly once: " + ("yes" if verdict.ok else "NO"))
        if not verdict.ok:
            sys.exit(1)


def _stop(
    hosts: list[Host], beat: subprocess.Popen[bytes] | None, services: Services | None
) -> None:
    for host in hosts:
        with contextlib.suppress(Exception):
            host.stop()
    if beat is not None and beat.poll() is None:
        os.killpg(beat.pid, signal.SIGKILL)
        beat.wait(timeout=30)
    if services is not None:
        services.stop()


def main() -> None:
    args = _arguments()
    database_url = os.environ.get(
        "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ohhell_bench_hosts"
    )
    db = urlsplit(database_url)
    plan = plan_hosts(3)
    signal.signal(signal.SIGTERM, _on_signal)
    tmp = Path(tempfile.mkdtemp(prefix="bench-hosts-"))
    services: Services | None = None
    hosts: list[Host] = []
    beat: subprocess.Popen[bytes] | None = None
    try:
        build_network(plan)
        ensure_database(database_url)
        target = (db.hostname or "127.0.0.1", db.port or 5432)
        services = start_services(str(plan.hub), target, args.bot_delay_ms / 1000, tmp)
        root_env, host_env = _environments(database_url, services)
        os.environ.update(root_env)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT, env=root_env, check=True,
        )  # fmt: skip
        cast, queries = _prepare(services)
        beat = _start_beat(root_env, tmp)
        hosts = [Host(p, host_env, args.concurrency, tmp) for p in plan.hosts]
        names = [h.plan.netns for h in hosts]
        print(f"hosts {names}, hub {services.hub}, logs in {tmp}", flush=True)
        _measure(hosts, cast, services, queries, args)
    finally:
        _stop(hosts, beat, services)
        teardown_network(plan)
        print(f"namespaces removed; logs kept in {tmp}")


if __name__ == "__main__":
    main()
