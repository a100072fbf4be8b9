"""The hub's services and the worker hosts: the database through a forwarder, a private Redis,
the bots, one Celery worker per host namespace; and the load they report."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bench.support.bots import serve_bots
from bench.support.forwarder import DB_KEEPALIVE_QUERY, KEEPALIVE_IDLE_S, serve_forwarder
from bench.support.netns import HostPlan
from bench.support.processes import ROOT, free_port, process_cpu, redis_server


@dataclass
class Services:
    hub: str
    db_port: int
    redis_port: int
    bot_port: int
    bot_calls: Any
    processes: list[Any]

    def stop(self) -> None:
        for process in self.processes:
            with contextlib.suppress(Exception):
                process.terminate()
        for process in self.processes:
            with contextlib.suppress(Exception):
                if isinstance(process, subprocess.Popen):
                    process.wait(timeout=10)
                else:
                    process.join(timeout=10)


def start_services(hub: str, db_target: tuple[str, int], bot_delay_s: float, tmp: Path) -> Services:
    context = multiprocessing.get_context("fork")  # before Django or any thread starts
    ready = context.Queue()
    calls = context.Value("q", 0)
    forwarder = context.Process(
        target=serve_forwarder, args=((hub, 0), db_target, ready), daemon=True
    )
    forwarder.start()
    db_port = ready.get(timeout=30)
    bots = context.Process(target=serve_bots, args=(hub, bot_delay_s, ready, calls), daemon=True)
    bots.start()
    bot_port = ready.get(timeout=60)
    redis_port = free_port(hub)
    redis = redis_server(
        hub, redis_port, "--protected-mode", "no", "--tcp-keepalive", str(KEEPALIVE_IDLE_S),
        "--dir", str(tmp), "--logfile", str(tmp / "redis.log"),
    )  # fmt: skip
    services = Services(hub, db_port, redis_port, bot_port, calls, [forwarder, bots, redis])
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection((hub, redis_port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return services
        except OSError:
            if time.monotonic() > deadline:
                services.stop()
                raise
        time.sleep(0.2)


class Host:
    """One worker host: a Celery worker in the host's namespace, with the host's own name."""

    def __init__(self, plan: HostPlan, env: dict[str, str], concurrency: int, logs: Path) -> None:
        self.plan = plan
        self.env = env
        self.concurrency = concurrency
        self.log = logs / f"{plan.name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def node(self) -> str:
        return f"{self.plan.name}@{self.plan.name}"

    def start(self) -> None:
        command = [
            "ip", "netns", "exec", self.plan.netns,
            "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', self.plan.name,
            sys.executable, "-m", "celery", "-A", "config", "worker", "-n", self.node,
            "-P", "threads", "-c", str(self.concurrency),
            "--without-gossip", "--without-mingle", "--loglevel", "WARNING",
        ]  # fmt: skip
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=log, start_new_session=True
            )

    def cpu(self) -> float:
        return process_cpu(self.process.pid) if self.process else 0.0

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        self.process = None


def wait_ready(hosts: Sequence[Host], timeout: float = 180) -> None:
    """Wait until every host's worker answers a ping through the broker."""
    from config.celery_app import app

    waiting = {host.node for host in hosts}
    deadline = time.monotonic() + timeout
    while waiting:
        for host in hosts:
            if host.process is not None and host.process.poll() is not None:
                raise RuntimeError(f"{host.plan.name}'s worker exited; see {host.log}")
        for reply in app.control.ping(destination=sorted(waiting), timeout=1.0) or []:
            waiting -= set(reply)
        if time.monotonic() > deadline:
            raise RuntimeError(f"workers not ready: {sorted(waiting)}")


def hub_database_url(url: str, hub: str, port: int) -> str:
    """The database URL as a host sees it: the hub's forwarder, with TCP keep-alive set."""
    parts = urlsplit(url)
    auth = parts.netloc.rpartition("@")[0]
    netloc = f"{auth}@{hub}:{port}" if auth else f"{hub}:{port}"
    query = f"{parts.query}&{DB_KEEPALIVE_QUERY}" if parts.query else DB_KEEPALIVE_QUERY
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def ensure_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit((parts.scheme, parts.netloc, "/postgres", "", ""))
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


class Queries:
    """Counts this process's own SQL statements, to take them out of the database's figures."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        self.count += 1
        return execute(sql, params, many, context)


@dataclass
class Load:
    """Counters read before and after a run; their differences are the run's load."""

    commits: int
    rows_written: int
    redis_commands: int
    bot_calls: int
    bench_queries: int

    def minus(self, other: Load) -> Load:
        return Load(
            self.commits - other.commits,
            self.rows_written - other.rows_written,
            self.redis_commands - other.redis_commands,
            self.bot_calls - other.bot_calls,
            self.bench_queries - other.bench_queries,
        )


def read_load(services: Services, queries: Queries) -> Load:
    import redis
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted FROM pg_stat_database "
            "WHERE datname = current_database()"
        )
        commits, rows = cursor.fetchone()
    # redis-py types a command's answer as the asyncio client's too (Awaitable[Any] | Any).
    hub = redis.Redis(host=services.hub, port=services.redis_port)
    info: dict[str, Any] = hub.info("stats")  # type: ignore[assignment]
    # Counted after the statements above, so a difference of two reads holds its own two.
    return Load(commits, rows, int(info["total_commands_processed"]), services.bot_calls.value,
                queries.count)  # fmt: skip
