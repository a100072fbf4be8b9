"""Celery workers on three "hosts" of their own: throughput per host count, and a cut link.

Run as root (network namespaces): .venv/bin/python bench/bench_hosts.py [--rounds 3]
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
import asyncio
import contextlib
import ipaddress
import logging
import math
import multiprocessing
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.variant import Variant as EngineVariant  # noqa: E402

NETWORK = ipaddress.IPv4Network("10.200.0.0/16")
PREFIX = "ohhb"  # names of this script's namespaces and interfaces
QUEUE = NAME = "bench-hosts"  # the queue, and the start of every name the bench gives
STALE_SECONDS = 15  # MATCH_STALE_SECONDS on the hosts: the smallest the settings allow
TABLE = 4
BOTS = 16
SHORT_OPTIONS = {"max_cards": 3, "order": "down"}
# Keep-alive on the hosts' database connections and on the forwarder's side of them, so a
# connection to a host that vanished fails in seconds instead of the kernel's 15 minutes.
KEEPALIVE_IDLE_S, KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT, USER_TIMEOUT_MS = 5, 2, 3, 10_000
DB_KEEPALIVE_QUERY = (
    f"connect_timeout=5&keepalives=1&keepalives_idle={KEEPALIVE_IDLE_S}"
    f"&keepalives_interval={KEEPALIVE_INTERVAL_S}&keepalives_count={KEEPALIVE_COUNT}"
    f"&tcp_user_timeout={USER_TIMEOUT_MS}"
)


# -- address planning ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HostPlan:
    """One worker host: its namespace, its veth pair and the pair's /30."""

    index: int
    name: str  # host name inside the host, and the worker's node name
    netns: str
    veth_root: str  # the root namespace's end
    veth_host: str  # the host's end
    subnet: ipaddress.IPv4Network
    root_address: ipaddress.IPv4Address
    host_address: ipaddress.IPv4Address


@dataclass(frozen=True)
class NetworkPlan:
    hub: ipaddress.IPv4Address  # where PostgreSQL, Redis and the bots answer
    hosts: list[HostPlan]


def plan_hosts(count: int, network: ipaddress.IPv4Network = NETWORK) -> NetworkPlan:
    """Give ``count`` hosts a /30 each (the i-th /24 of ``network``), the hub the first address."""
    if network.prefixlen > 16 or not network.is_private:
        raise ValueError(f"{network} must be a private network of /16 or more")
    if not 1 <= count <= 250:
        raise ValueError("between 1 and 250 hosts")
    base = int(network.network_address)
    hosts = []
    for i in range(1, count + 1):
        subnet = ipaddress.IPv4Network((base + 256 * i, 30))
        hosts.append(
            HostPlan(
                index=i,
                name=f"host{i}",
                netns=f"{PREFIX}-host{i}",
                veth_root=f"{PREFIX}{i}",
                veth_host=f"{PREFIX}{i}h",
                subnet=subnet,
                root_address=subnet.network_address + 1,
                host_address=subnet.network_address + 2,
            )
        )
    return NetworkPlan(hub=network.network_address + 1, hosts=hosts)


def setup_commands(plan: NetworkPlan) -> list[list[str]]:
    """The ``ip`` commands that build the plan (the hub address first)."""
    commands = [["ip", "addr", "add", f"{plan.hub}/32", "dev", "lo"]]
    for host in plan.hosts:
        inside = ["ip", "-n", host.netns]
        plen = host.subnet.prefixlen
        commands += [
            ["ip", "netns", "add", host.netns],
            ["ip", "link", "add", host.veth_root, "type", "veth", "peer", "name", host.veth_host],
            ["ip", "link", "set", host.veth_host, "netns", host.netns],
            ["ip", "addr", "add", f"{host.root_address}/{plen}", "dev", host.veth_root],
            ["ip", "link", "set", host.veth_root, "up"],
            [*inside, "addr", "add", f"{host.host_address}/{plen}", "dev", host.veth_host],
            [*inside, "link", "set", host.veth_host, "up"],
            [*inside, "link", "set", "lo", "up"],
            # The hub only: nothing else is routed out of a host.
            [*inside, "route", "add", f"{plan.hub}/32", "via", str(host.root_address)],
        ]
    return commands


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


def teardown_network(plan: NetworkPlan) -> None:
    """Remove whatever part of the plan exists (deleting a namespace deletes its veth pair)."""
    existing = _ip("netns", "list").stdout.split()
    for host in plan.hosts:
        if host.netns in existing:
            _ip("netns", "del", host.netns)
        if _ip("link", "show", host.veth_root).returncode == 0:
            _ip("link", "del", host.veth_root)
    if f"{plan.hub}/32" in _ip("-4", "-o", "addr", "show", "dev", "lo").stdout:
        _ip("addr", "del", f"{plan.hub}/32", "dev", "lo")


def build_network(plan: NetworkPlan) -> None:
    teardown_network(plan)  # left over from a run that was killed
    for command in setup_commands(plan):
        subprocess.run(command, check=True, capture_output=True, text=True)


def set_link(host: HostPlan, up: bool) -> None:
    subprocess.run(
        ["ip", "link", "set", host.veth_root, "up" if up else "down"], check=True, text=True
    )


# -- the hub's services -------------------------------------------------------------------------


def _keepalive(sock: socket.socket) -> None:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, KEEPALIVE_IDLE_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, KEEPALIVE_INTERVAL_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, KEEPALIVE_COUNT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, USER_TIMEOUT_MS)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


def _quiet_child() -> None:
    """A service process: stopped by the bench (SIGTERM), deaf to the terminal's Ctrl-C."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def serve_forwarder(listen: tuple[str, int], target: tuple[str, int], ready: Any) -> None:
    """Forward TCP from ``listen`` to ``target`` until killed (a process of its own)."""
    _quiet_child()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _keepalive(writer.get_extra_info("socket"))
        try:
            up_reader, up_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def main() -> None:
        server = await asyncio.start_server(handle, *listen)
        ready.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


def serve_bots(host: str, delay_s: float, ready: Any, calls: Any) -> None:
    """Serve the "random" reference player under any path, answering after ``delay_s``."""
    _quiet_child()
    # A cut host's connections end in resets; that is the experiment, not news.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    from aiohttp import web

    from arena.botserver import make_app

    @web.middleware
    async def think(request: web.Request, handler: Any) -> web.StreamResponse:
        with calls.get_lock():
            calls.value += 1
        await asyncio.sleep(delay_s)
        response: web.StreamResponse = await handler(request)
        return response

    async def main() -> None:
        app = make_app("random", seed=7)
        app.middlewares.append(think)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, 0)
        await site.start()
        ready.put(runner.addresses[0][1])
        await asyncio.Event().wait()

    asyncio.run(main())


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


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
    redis_port = _free_port(hub)
    redis = subprocess.Popen(
        [
            "redis-server",
            "--bind",
            hub,
            "--port",
            str(redis_port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
            "--tcp-keepalive",
            str(KEEPALIVE_IDLE_S),
            "--dir",
            str(tmp),
            "--logfile",
            str(tmp / "redis.log"),
        ],
        start_new_session=True,
    )
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


# -- processes: workers and beat ----------------------------------------------------------------


def cpu_seconds(stat_line: str, ticks_per_second: int) -> float:
    """User plus system CPU time from a /proc/<pid>/stat line (its own threads included)."""
    fields = stat_line[stat_line.rindex(")") + 2 :].split()
    # After the command name: state is field 3 of stat(5), utime and stime are 14 and 15.
    return (int(fields[11]) + int(fields[12])) / ticks_per_second


def process_cpu(pid: int) -> float:
    try:
        line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    return cpu_seconds(line, os.sysconf("SC_CLK_TCK"))


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


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.5)


# -- database -----------------------------------------------------------------------------------


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


# -- the platform's objects ---------------------------------------------------------------------


@dataclass
class Cast:
    organiser: Any
    variant: Any
    bot_ids: list[int]


def prepare_cast(hub: str, bot_port: int) -> Cast:
    from django.contrib.auth.models import User

    from tournaments.models import Bot, Variant
    from tournaments.services.variants import variant_create, variants_seed_presets

    variants_seed_presets()
    organiser, _ = User.objects.get_or_create(
        username="bench-hosts", defaults={"is_staff": True, "is_superuser": True}
    )
    variant = Variant.objects.filter(name="bench-hosts-short").first() or variant_create(
        user=organiser, name="bench-hosts-short", base="oh-hell", options=SHORT_OPTIONS
    )
    bot_ids = []
    for i in range(BOTS):
        bot, _ = Bot.objects.update_or_create(
            name=f"bench-hosts-{i}",
            defaults={
                "owner": organiser,
                "endpoint_url": f"http://{hub}:{bot_port}/b{i}",
                "secret": f"bench-secret-{i}",
                "status": "active",
            },
        )
        bot_ids.append(bot.pk)
    return Cast(organiser, variant, bot_ids)


def cancel_leftovers() -> int:
    """Cancel the tournaments an interrupted run left going, and their queued matches.

    Otherwise the sweeper sends their matches again (MATCH_RESEND_SECONDS) and this run's
    workers play them in the middle of a measurement.
    """
    from tournaments.models import Tournament, TournamentStatus
    from tournaments.services.tournaments import tournament_cancel

    left = Tournament.objects.filter(name__startswith=NAME).exclude(
        status__in=[TournamentStatus.FINISHED, TournamentStatus.CANCELLED]
    )
    for tournament in left:
        tournament_cancel(tournament=tournament)
    return len(left)


def start_tournament(cast: Cast, name: str, format: str, rounds: int) -> int:
    from tournaments.services.tournaments import tournament_create, tournament_start

    tournament = tournament_create(
        organiser=cast.organiser,
        name=name,
        variant=cast.variant,
        format=format,
        bot_ids=cast.bot_ids,
        table_size=TABLE,
        rounds=rounds,
    )
    tournament_start(tournament=tournament)
    return tournament.pk


def tournament_done(tournament_id: int) -> bool:
    """Every match ended and rated (failed ones count as ended), the tournament finished."""
    from tournaments.models import Match, MatchStatus, Tournament, TournamentStatus

    if Tournament.objects.get(pk=tournament_id).status != TournamentStatus.FINISHED:
        return False
    matches = Match.objects.filter(tournament_id=tournament_id)
    return not matches.filter(status=MatchStatus.FINISHED, rated=False).exists()


def host_of(claimed_by: str) -> str:
    """The host name a claim token starts with (tournaments.leases.claim_token)."""
    return claimed_by.split(":", 1)[0]


# -- throughput ---------------------------------------------------------------------------------


@dataclass
class Arm:
    hosts: int
    matches: int
    seconds: float
    per_host: dict[str, int]
    cpu_s: float
    load: Load
    match_seconds: float  # median, claim to result
    replay_bytes: float  # mean, as stored (compressed)

    @property
    def rate(self) -> float:
        return self.matches / self.seconds


def play_arm(
    hosts: list[Host], cast: Cast, services: Services, queries: Queries, label: str, rounds: int
) -> Arm:
    from django.db.models import Avg, F, Func, IntegerField, Max

    from tournaments.models import Match, Replay, Tournament

    for host in hosts:
        host.start()
    try:
        wait_ready(hosts)
        before = read_load(services, queries)
        cpu_before = sum(host.cpu() for host in hosts)
        tournament_id = start_tournament(cast, label, "round_robin", rounds)
        wait_until(lambda: tournament_done(tournament_id), 1800, f"tournament {label}")
        cpu = sum(host.cpu() for host in hosts) - cpu_before
    finally:
        for host in hosts:
            host.stop()
    time.sleep(1)  # the workers' database sessions have ended and flushed their statistics
    after = read_load(services, queries)
    started = Tournament.objects.get(pk=tournament_id).started_at
    matches = Match.objects.filter(tournament_id=tournament_id)
    last = matches.aggregate(last=Max("finished_at"))["last"]
    per_host: dict[str, int] = {}
    for claimed_by in matches.values_list("claimed_by", flat=True):
        per_host[host_of(claimed_by)] = per_host.get(host_of(claimed_by), 0) + 1
    durations = [
        (end - start).total_seconds()
        for start, end in matches.values_list("started_at", "finished_at")
        if start is not None and end is not None
    ]
    stored = Func(F("data"), function="pg_column_size", output_field=IntegerField())
    replays = Replay.objects.filter(match__tournament_id=tournament_id)
    replay_bytes = replays.aggregate(size=Avg(stored))["size"]
    return Arm(
        len(hosts), matches.count(), (last - started).total_seconds(), per_host, cpu,
        after.minus(before), statistics.median(durations), float(replay_bytes),
    )  # fmt: skip


def rotation(counts: Sequence[int], round_index: int) -> list[int]:
    """The order of the host counts in a round: each goes first in turn."""
    shift = round_index % len(counts)
    return [*counts[shift:], *counts[:shift]]


def median_range(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    return (
        f"{fmt.format(statistics.median(values))} "
        f"({fmt.format(min(values))}-{fmt.format(max(values))})"
    )


def throughput(
    all_hosts: list[Host],
    cast: Cast,
    services: Services,
    queries: Queries,
    args: argparse.Namespace,
) -> dict[int, list[Arm]]:
    counts = [1, 2, 3]
    rr_rounds = max(1, args.matches * TABLE // BOTS)
    arms: dict[int, list[Arm]] = {n: [] for n in counts}
    stamp = time.strftime("%H%M%S")
    for r in range(args.rounds):
        for n in rotation(counts, r):
            label = f"{NAME} {stamp} round {r + 1} {n} host(s)"
            arm = play_arm(all_hosts[:n], cast, services, queries, label, rr_rounds)
            arms[n].append(arm)
            print(
                f"round {r + 1}, {n} host(s): {arm.matches} matches in {arm.seconds:.1f} s = "
                f"{arm.rate:.2f}/s; by host {dict(sorted(arm.per_host.items()))}; "
                f"worker CPU {arm.cpu_s / arm.matches * 1000:.0f} ms/match; "
                f"machine load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    return arms


def report_throughput(arms: dict[int, list[Arm]], args: argparse.Namespace) -> None:
    rounds = len(arms[1])
    print(
        f"\n{rounds} rounds, {arms[1][0].matches} matches a run, {args.bot_delay_ms} ms bots, "
        f"-P threads -c {args.concurrency} per host"
    )
    print("| hosts | matches/s | vs 1 host, same round | worker CPU ms/match | by host (median) |")
    print("|---|---|---|---|---|")
    for n, runs in arms.items():
        ratios = [run.rate / anchor.rate for run, anchor in zip(runs, arms[1], strict=True)]
        names = sorted({name for run in runs for name in run.per_host})
        split = ", ".join(
            f"{name} {statistics.median(run.per_host.get(name, 0) for run in runs):g}"
            for name in names
        )
        print(
            f"| {n} | {median_range([r.rate for r in runs])} | "
            f"{'anchor' if n == 1 else median_range(ratios) + 'x'} | "
            f"{median_range([r.cpu_s / r.matches * 1000 for r in runs], '{:.0f}')} | {split} |"
        )
    every = [run for runs in arms.values() for run in runs]

    def per_match(value: Callable[[Arm], float]) -> str:
        return median_range([value(run) / run.matches for run in every], "{:.1f}")

    print("\nLoad per match, median (range) over all runs:")
    print(f"- bot calls (HTTP requests): {per_match(lambda r: r.load.bot_calls)}")
    print(
        "- database transactions (the bench's own statements taken out): "
        f"{per_match(lambda r: r.load.commits - r.load.bench_queries)}"
    )
    print(
        f"- database rows inserted, updated or deleted: {per_match(lambda r: r.load.rows_written)}"
    )
    print(f"- Redis commands (idle polling included): {per_match(lambda r: r.load.redis_commands)}")
    print(f"- match length, claim to result: {median_range([r.match_seconds for r in every])} s")
    print(f"- replay as stored: {median_range([r.replay_bytes for r in every], '{:.0f}')} bytes")

    measured = PerMatch(
        calls=statistics.median(r.load.bot_calls / r.matches for r in every),
        seconds=statistics.median(r.match_seconds for r in every),
        cpu_s=statistics.median(r.cpu_s / r.matches for r in every),
        transactions=statistics.median(
            (r.load.commits - r.load.bench_queries) / r.matches for r in every
        ),
        rows=statistics.median(r.load.rows_written / r.matches for r in every),
        redis_commands=statistics.median(r.load.redis_commands / r.matches for r in every),
        replay_bytes=statistics.median(r.replay_bytes for r in every),
    )
    report_sizing(measured)


# -- sizing -------------------------------------------------------------------------------------

SECONDS_PER_MONTH = 30 * 86400


def bot_calls(variant: EngineVariant, seats: int) -> int:
    """Calls to the bots in one match: a hello to each seat, then every bid and every card."""
    schedule = variant.schedule(seats)
    return seats + seats * len(schedule) + seats * sum(schedule)


@dataclass(frozen=True)
class PerMatch:
    """What one match cost in the throughput runs (medians)."""

    calls: float
    seconds: float  # claim to result
    cpu_s: float  # worker CPU
    transactions: float
    rows: float
    redis_commands: float
    replay_bytes: float


@dataclass(frozen=True)
class Sizing:
    """A ladder's needs at its average rate; ``peak_factor`` times that at peaks."""

    matches_per_second: float
    match_seconds: float
    in_flight: float
    peak_in_flight: float
    # A ladder keeps LADDER_MATCHES_IN_FLIGHT tables playing: what the rate needs, and the
    # matches a month the current setting allows at this match length.
    ladder_matches_in_flight: int
    matches_per_month_at_current_setting: float
    worker_processes: int
    cpu_cores: float
    peak_cpu_cores: float
    transactions_per_second: float
    rows_per_second: float
    redis_commands_per_second: float
    replay_gb_per_month: float
    matches_per_bot_per_day: float


def size_ladder(
    measured: PerMatch,
    *,
    calls_per_match: int,
    heartbeat_seconds: float,
    ladder_in_flight: int,
    matches_per_month: int = 1_000_000,
    bots: int = 10_000,
    seats: int = TABLE,
    peak_factor: float = 3.0,
    threads_per_worker: int = 16,
) -> Sizing:
    """Scale measured short matches to a ladder's longer ones, call for call.

    A match's wall time, worker CPU and replay grow with its bot calls (the fixed part of each
    is counted as if it grew too, which over-states them); its database writes grow by one
    heartbeat per ``heartbeat_seconds`` of the longer match; its Redis commands (a handful of
    tasks) do not grow. In flight is Little's law: rate times match length.
    """
    rate = matches_per_month / SECONDS_PER_MONTH
    scale = calls_per_match / measured.calls
    match_seconds = measured.seconds * scale
    extra_heartbeats = (match_seconds - measured.seconds) / heartbeat_seconds
    in_flight = rate * match_seconds
    cpu = rate * measured.cpu_s * scale
    return Sizing(
        matches_per_second=rate,
        match_seconds=match_seconds,
        in_flight=in_flight,
        peak_in_flight=in_flight * peak_factor,
        ladder_matches_in_flight=math.ceil(in_flight),
        matches_per_month_at_current_setting=ladder_in_flight / match_seconds * SECONDS_PER_MONTH,
        worker_processes=max(1, math.ceil(in_flight * peak_factor / threads_per_worker)),
        cpu_cores=cpu,
        peak_cpu_cores=cpu * peak_factor,
        transactions_per_second=rate * (measured.transactions + extra_heartbeats),
        rows_per_second=rate * (measured.rows + extra_heartbeats),
        redis_commands_per_second=rate * measured.redis_commands,
        replay_gb_per_month=matches_per_month * measured.replay_bytes * scale / 1e9,
        matches_per_bot_per_day=matches_per_month * seats / bots / (SECONDS_PER_MONTH / 86400),
    )


def report_sizing(measured: PerMatch) -> None:
    from django.conf import settings

    from engine.presets import preset
    from tournaments.leases import HEARTBEAT_SECONDS

    full = bot_calls(preset("oh-hell"), TABLE)
    short = bot_calls(preset("oh-hell", **SHORT_OPTIONS), TABLE)
    size = size_ladder(
        measured,
        calls_per_match=full,
        heartbeat_seconds=HEARTBEAT_SECONDS,
        ladder_in_flight=settings.LADDER_MATCHES_IN_FLIGHT,
    )
    print(
        f"\nSizing: 10,000 bots, 1,000,000 matches a month of oh-hell ({full} bot calls a "
        f"match; {short} in the short variant measured, {measured.calls:.0f} counted), "
        "peaks 3x the average, 16 threads a worker process, LADDER_MATCHES_IN_FLIGHT="
        f"{settings.LADDER_MATCHES_IN_FLIGHT}:"
    )
    for name, value in vars(size).items():
        print(f"- {name.replace('_', ' ')}: {value:.3g}")


# -- the cut ------------------------------------------------------------------------------------


@dataclass
class Verdict:
    lines: list[str]
    ok: bool


def check_exactly_once(tournament_id: int) -> Verdict:
    """Every match ended once, one update per rated unit, ratings equal to a recompute."""
    from django.db.models import Count

    from tournaments.models import (
        Match,
        MatchSeat,
        MatchStatus,
        Rating,
        RatingHistory,
        Replay,
        SeatFault,
    )
    from tournaments.services.recompute import ratings_recompute

    lines: list[str] = []
    ok = True

    def check(condition: bool, text: str) -> None:
        nonlocal ok
        ok = ok and condition
        lines.append(f"{'ok ' if condition else 'BAD'} {text}")

    matches = Match.objects.filter(tournament_id=tournament_id)
    ids = list(matches.values_list("pk", flat=True))
    statuses = dict(
        matches.values_list("status").annotate(n=Count("pk")).values_list("status", "n")
    )
    check(statuses == {MatchStatus.FINISHED: len(ids)}, f"{len(ids)} matches, status {statuses}")
    replays = Replay.objects.filter(match_id__in=ids).values("match_id").annotate(n=Count("pk"))
    check(
        len(replays) == len(ids) and all(r["n"] == 1 for r in replays),
        f"one replay per match: {len(replays)} matches with replays, most "
        f"{max((r['n'] for r in replays), default=0)} each",
    )
    unscored = MatchSeat.objects.filter(match_id__in=ids, score__isnull=True).count()
    check(unscored == 0, f"seats without a score: {unscored}")
    rated = matches.filter(rated=True)
    groups = set(rated.exclude(rating_group="").values_list("rating_group", flat=True))
    singles = rated.filter(rating_group="").count()
    units = len(groups) + singles
    history = RatingHistory.objects.filter(match_id__in=ids)
    per_unit = list(history.values("match_id").annotate(n=Count("pk")).values_list("n", flat=True))
    check(
        rated.count() == len(ids) and len(per_unit) == units and set(per_unit) <= {TABLE},
        f"rated units: {units} ({len(groups)} duplicate groups, {singles} single matches), "
        f"each with one update of {TABLE} history rows: {len(per_unit)} updates, "
        f"{history.count()} rows",
    )
    retried = list(matches.filter(attempts__gt=1).values_list("pk", "attempts", "claimed_by"))
    lines.append(
        f"    matches played more than once: {len(retried)} "
        + ", ".join(f"#{pk} x{n} (kept {host_of(c)})" for pk, n, c in retried)
    )
    faults = dict(
        SeatFault.objects.filter(seat__match_id__in=ids)
        .values_list("kind")
        .annotate(n=Count("pk"))
        .values_list("kind", "n")
    )
    lines.append(f"    bot faults recorded in the tournament's results: {faults or 'none'}")

    def snapshot() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        return (
            list(Rating.objects.order_by("bot_id", "variant_id").values_list(
                "bot_id", "variant_id", "mu", "sigma", "matches")),
            list(RatingHistory.objects.order_by("bot_id", "variant_id", "sequence").values_list(
                "bot_id", "variant_id", "match_id", "sequence", "mu_before", "sigma_before",
                "mu_after", "sigma_after", "at")),
        )  # fmt: skip

    live = snapshot()
    ratings_recompute()
    again = snapshot()
    check(
        live == again,
        f"ratings and history equal a recompute, bit for bit: {len(live[0])} ratings, "
        f"{len(live[1])} history rows",
    )
    return Verdict(lines, ok)


def cut_run(
    all_hosts: list[Host], cast: Cast, args: argparse.Namespace
) -> tuple[Verdict, list[str]]:
    from django.db.models import Max

    from tournaments.models import Match, MatchStatus, Tournament

    victim = all_hosts[-1]
    events: list[str] = []
    t0 = time.monotonic()

    def note(text: str) -> None:
        events.append(f"{time.monotonic() - t0:6.1f} s  {text}")
        print(events[-1], flush=True)

    for host in all_hosts:
        host.start()
    try:
        wait_ready(all_hosts)
        tournament_id = start_tournament(
            cast, f"{NAME} {time.strftime('%H%M%S')} cut", "duplicate", args.cut_rounds
        )
        note(f"duplicate tournament {tournament_id} started: {args.cut_rounds} round(s)")

        def victim_playing() -> list[int]:
            return list(
                Match.objects.filter(
                    tournament_id=tournament_id,
                    status=MatchStatus.RUNNING,
                    claimed_by__startswith=f"{victim.plan.name}:",
                ).values_list("pk", flat=True)
            )

        wait_until(lambda: bool(victim_playing()), 300, f"{victim.plan.name} to play a match")
        time.sleep(0.7)  # into the match
        held = victim_playing()
        set_link(victim.plan, up=False)
        matches = Match.objects.filter(tournament_id=tournament_id)
        done = matches.filter(status=MatchStatus.FINISHED).count()
        note(
            f"{victim.plan.veth_root} down: {victim.plan.name} cut off while playing matches "
            f"{held}; {done} of {matches.count()} finished"
        )
        if args.no_restore:
            note(f"{victim.plan.name} stays cut off")
        else:
            time.sleep(args.cut_seconds)
            set_link(victim.plan, up=True)
            note(f"{victim.plan.veth_root} up again after {args.cut_seconds} s")
        wait_until(lambda: tournament_done(tournament_id), 1800, "the tournament to finish")
        last = Match.objects.filter(tournament_id=tournament_id).aggregate(m=Max("finished_at"))
        started = Tournament.objects.get(pk=tournament_id).started_at
        note(
            "tournament finished and rated; last result "
            f"{(last['m'] - started).total_seconds():.1f} s after its start"
        )
        for pk in held:
            match = Match.objects.get(pk=pk)
            note(
                f"match {pk}, held by {victim.plan.name} at the cut: {match.status}, "
                f"{match.attempts} attempt(s), result kept from {host_of(match.claimed_by)}"
            )
        if not args.no_restore:
            try:
                wait_ready([victim], timeout=120)
                note(f"{victim.plan.name}'s worker answers through the broker again")
            except RuntimeError as exc:
                note(f"{victim.plan.name}'s worker does not answer 120 s after: {exc}")
        log = victim.log.read_text(errors="replace")
        note(
            f"{victim.plan.name}'s log: {log.count('heartbeat missed')} missed heartbeats, "
            f"{log.count('recording match')} failed tries to record a result"
        )
    finally:
        if args.no_restore:
            set_link(victim.plan, up=True)  # so its worker can be stopped cleanly
        for host in all_hosts:
            host.stop()
    return check_exactly_once(tournament_id), events


# -- main ---------------------------------------------------------------------------------------


def _on_signal(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> None:
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

    database_url = os.environ.get(
        "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ohhell_bench_hosts"
    )
    db = urlsplit(database_url)
    plan = plan_hosts(3)
    hub = str(plan.hub)
    signal.signal(signal.SIGTERM, _on_signal)
    tmp = Path(tempfile.mkdtemp(prefix="bench-hosts-"))
    services: Services | None = None
    hosts: list[Host] = []
    beat: subprocess.Popen[bytes] | None = None
    try:
        build_network(plan)
        ensure_database(database_url)
        services = start_services(
            hub, (db.hostname or "127.0.0.1", db.port or 5432), args.bot_delay_ms / 1000, tmp
        )
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
        host_env = {
            **common,
            "DATABASE_URL": hub_database_url(database_url, hub, services.db_port),
        }
        os.environ.update(root_env)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT, env=root_env, check=True,
        )  # fmt: skip
        import django

        django.setup()
        from django.db import connection

        queries = Queries()
        connection.execute_wrappers.append(queries)
        cast = prepare_cast(hub, services.bot_port)
        if cancelled := cancel_leftovers():
            print(f"cancelled {cancelled} tournament(s) an interrupted run left going")
        beat = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "beat", "-s", str(tmp / "beat"),
             "--loglevel", "WARNING"],
            cwd=ROOT, env=root_env, start_new_session=True,
            stdout=(tmp / "beat.log").open("ab"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        hosts = [Host(p, host_env, args.concurrency, tmp) for p in plan.hosts]
        print(f"hosts {[h.plan.netns for h in hosts]}, hub {hub}, logs in {tmp}", flush=True)
        if not args.skip_throughput:
            report_throughput(throughput(hosts, cast, services, queries, args), args)
        if not args.skip_cut:
            verdict, _ = cut_run(hosts, cast, args)
            print("\n".join(verdict.lines))
            print("exactly once: " + ("yes" if verdict.ok else "NO"))
            if not verdict.ok:
                sys.exit(1)
    finally:
        for host in hosts:
            with contextlib.suppress(Exception):
                host.stop()
        if beat is not None and beat.poll() is None:
            os.killpg(beat.pid, signal.SIGKILL)
            beat.wait(timeout=30)
        if services is not None:
            services.stop()
        teardown_network(plan)
        print(f"namespaces removed; logs kept in {tmp}")


if __name__ == "__main__":
    main()
