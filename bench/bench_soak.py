"""A soak of the always-on ladder on the deployment's shape: N bots for M minutes, and its cost.

Run: nice -n 5 .venv/bin/python bench/bench_soak.py [--bots 1000 | --big] [--minutes 10]
    [--in-flight 16] [--ladder-workers 1] [--threads 16] [--keep]

``--big`` registers 10,000 bots. Everything runs here, as docker/compose.yaml runs it: gunicorn
(2 gthread workers of 4 threads, ``--no-control-socket``), a control worker (``-P threads -c 2``),
``--ladder-workers`` ladder workers (``-P threads -c --threads``; one per core is the shape that
scales), a bulk worker, beat, PostgreSQL (a database of the run's own, ``ohhell_bench_soak``,
recreated unless ``--keep`` finds it loaded) and a private redis-server (broker and cache). No
match worker: nothing but the ladder plays.

The bots: ``--bots`` registered bots of two per owner, every owner's address confirmed, all
served by one fast bot process (the "random" reference player under any path,
``bench_hosts.serve_bots``), whose address is a shared host so its bots are not one team.
Loaded with SQL ``INSERT ... SELECT``.

The run: the ladder plays for ``--minutes`` (after its first match ends), while one client reads
the leaderboard and the health endpoint (the anchor) in turn over one keep-alive connection.
Then the ladder is paused, its queued tables cancelled, the last ratings written, and every
rating and history row compared with a recompute (``ratings_recompute``), bit for bit.

Printed: matches and bot decisions a second; CPU seconds a match of the ladder and control
workers (every process of each); database bytes, transactions and new connections a match,
and the most connections open at once; Redis commands a match; top-up and rating-write times
(the control worker's own log of each task's run time); the web's p50 and p99 for both
endpoints; matches per bot (min, p10, median, p90, max over every bot); failed matches, worker
errors and web errors; and the recompute's verdict.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_hosts import process_cpu, serve_bots, wait_until  # noqa: E402

DB_NAME = "ohhell_bench_soak"
DB_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
PSQL = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-v", "ON_ERROR_STOP=1"]
QUEUE = f"bench-soak-{uuid.uuid4().hex[:8]}"
# The control worker logs each task's run time at INFO (Celery's own line for a task done).
TASK_DONE = re.compile(
    r"^\[(?P<at>[\d-]+ [\d:,]+).*Task (?P<task>tournaments\.\w+)\[[^\]]+\] succeeded in "
    r"(?P<seconds>[\d.e-]+)s"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def psql_value(sql: str) -> str:
    out = subprocess.run([*PSQL, "-d", DB_NAME, "-tAc", sql], capture_output=True, text=True)
    out.check_returncode()
    return out.stdout.strip()


@dataclass
class Role:
    """One kind of process of the deployment, and the processes it started."""

    name: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def cpu(self) -> float:
        """CPU seconds of every process of the role's process groups, children included."""
        groups = {p.pid for p in self.processes}
        total = 0.0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) in groups:  # field 5 of stat(5): the process group
                total += process_cpu(int(stat.parent.name))
        return total


def spawn(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_all(roles: list[Role]) -> None:
    """Stop each process as its supervisor would: SIGTERM to it alone (a Celery worker or
    gunicorn then stops its own children; signalled too, a prefork child dies mid-task and its
    parent logs a lost worker), SIGKILL to its whole group past 30 s."""
    for role in roles:
        for process in role.processes:
            if process.poll() is None:
                process.terminate()
    for role in roles:
        for process in role.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def load(bots: int, bot_port: int) -> None:
    """Owners (two bots each) with confirmed addresses, and their opted-in active bots."""
    from django.db import connection

    from tournaments.models import SharedHost

    owners = max(1, bots // 2)
    statements = [
        (
            "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name,"
            " email, is_staff, is_active, date_joined) SELECT '!', false, 'soak' || g, '', '',"
            " 'soak' || g || '@example.org', false, true, now() FROM generate_series(1, %s) g",
            [owners],
        ),
        (
            "INSERT INTO tournaments_confirmedemail (user_id, email, confirmed_at)"
            " SELECT id, email, now() FROM auth_user",
            [],
        ),
        (
            "INSERT INTO tournaments_bot (name, description, endpoint_url, secret, status,"
            " disabled_cause, disabled_reason, consecutive_failures, created_at, updated_at,"
            " owner_id, ladder_opt_in, version, accept_invitations, endpoint_addresses,"
            " security_warnings, accepts_scrimmages, reference_player) SELECT 'soak-' || g, '',"
            " 'http://127.0.0.1:' || %s || '/b' || g, 's' || g, 'active', '', '', 0, now(),"
            " now(), (SELECT min(id) FROM auth_user) + g %% %s, true, 1, true, '[\"127.0.0.1\"]',"
            " '[]', false, '' FROM generate_series(0, %s) g",
            [bot_port, owners, bots - 1],
        ),
    ]
    with connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)
    SharedHost.objects.get_or_create(address="127.0.0.1", defaults={"note": "the soak's bots"})


def loaded_bots() -> int:
    from tournaments.models import Bot

    return Bot.objects.filter(ladder_opt_in=True).count()


@dataclass
class Reading:
    """Counters read at the start and at the end of the window."""

    at: float
    finished: int
    failed: int
    calls: int
    db_bytes: int
    xacts: int
    sessions: int
    redis_commands: int
    cpu: dict[str, float]


def read(roles: list[Role], calls: Any, redis_port: int) -> Reading:
    """The counters now (``calls``: the bot server's shared count of requests)."""
    from tournaments.models import Match, MatchStatus

    stats = psql_value(
        "SELECT pg_database_size(current_database()), xact_commit + xact_rollback, sessions"
        " FROM pg_stat_database WHERE datname = current_database()"
    ).split("|")
    info = subprocess.run(
        ["redis-cli", "-p", str(redis_port), "info", "stats"], capture_output=True, text=True
    ).stdout
    found = re.search(r"total_commands_processed:(\d+)", info)
    if found is None:
        raise RuntimeError("redis-server gave no command count")
    ladder = Match.objects.filter(ladder__isnull=False)
    return Reading(
        at=time.monotonic(),
        finished=ladder.filter(status=MatchStatus.FINISHED).count(),
        failed=ladder.filter(status=MatchStatus.FAILED).count(),
        calls=calls.value,
        db_bytes=int(stats[0]),
        xacts=int(stats[1]),
        sessions=int(stats[2]),
        redis_commands=int(found.group(1)),
        cpu={role.name: role.cpu() for role in roles},
    )


@dataclass
class WebLoad:
    """One keep-alive client reading two endpoints in turn, with every answer's time."""

    port: int
    times: dict[str, list[float]] = field(default_factory=lambda: {"health": [], "leaderboard": []})
    errors: int = 0
    done: threading.Event = field(default_factory=threading.Event)

    PATHS = {"health": "/api/health/", "leaderboard": "/api/leaderboard/?variant=oh-hell"}

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        while not self.done.is_set():
            for name, path in self.PATHS.items():
                started = time.perf_counter()
                try:
                    connection.request("GET", path)
                    response = connection.getresponse()
                    response.read()
                    ok = response.status == 200
                except (OSError, http.client.HTTPException):
                    ok = False
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self.times[name].append((time.perf_counter() - started) * 1000)
                self.errors += not ok
            time.sleep(0.05)


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def task_times(log: Path, since: float, until: float) -> dict[str, list[float]]:
    """Milliseconds of each control task the worker logged as done within the window (epoch
    seconds): the settling after it, when the recompute holds the rating lock, is left out."""
    found: dict[str, list[float]] = {}
    for line in log.read_text(errors="replace").splitlines():
        match = TASK_DONE.match(line)
        if match is None:
            continue
        at = time.mktime(time.strptime(match["at"].split(",")[0], "%Y-%m-%d %H:%M:%S"))
        if since <= at <= until:
            found.setdefault(match["task"], []).append(float(match["seconds"]) * 1000)
    return found


def settle_and_compare() -> bool:
    """Pause the ladder, cancel its queued tables, let the last ratings be written, and compare
    every rating and history row with a recompute."""
    from tests.tournaments.services.rating_world import rating_snapshot
    from tournaments.models import Ladder, Match, MatchStatus
    from tournaments.services.ladders import ladder_pause
    from tournaments.services.recompute import ratings_recompute

    for ladder in Ladder.objects.all():
        ladder_pause(ladder=ladder)
    Match.objects.filter(ladder__isnull=False, status=MatchStatus.QUEUED).update(
        status=MatchStatus.CANCELLED
    )
    open_or_unrated = Match.objects.filter(status=MatchStatus.RUNNING) | Match.objects.filter(
        status=MatchStatus.FINISHED, rated=False
    )
    wait_until(lambda: not open_or_unrated.exists(), 600, "the last matches and ratings")
    live = rating_snapshot()
    ratings_recompute()
    return bool(rating_snapshot() == live)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--big", action="store_true", help="10,000 bots")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--in-flight", type=int, default=16, help="LADDER_MATCHES_IN_FLIGHT")
    parser.add_argument("--ladder-workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=16, help="threads a ladder worker")
    parser.add_argument("--keep", action="store_true", help="keep the database for a rerun")
    args = parser.parse_args()
    bots = 10_000 if args.big else args.bots

    context = multiprocessing.get_context("fork")  # before Django or any thread starts
    ready, calls = context.Queue(), context.Value("q", 0)
    bot_server = context.Process(target=serve_bots, args=("127.0.0.1", 0.0, ready, calls))
    bot_server.start()
    bot_port = ready.get(timeout=30)

    tmp = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    redis_port = free_port()
    redis = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(redis_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    env = {
        **os.environ,
        "DATABASE_URL": DB_URL,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "CELERY_QUEUE": QUEUE,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-" + "x" * 30,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "BOT_ALLOW_LOOPBACK": "1",
        "LADDER_MATCHES_IN_FLIGHT": str(args.in_flight),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    os.environ.update(env)
    import django

    reuse = (
        args.keep
        and subprocess.run([*PSQL, "-d", DB_NAME, "-c", "SELECT 1"], capture_output=True).returncode
        == 0
    )
    if not reuse:
        subprocess.run([*PSQL, "-c", f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)"], check=True)
        subprocess.run([*PSQL, "-c", f"CREATE DATABASE {DB_NAME}"], check=True)
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if not reuse or loaded_bots() != bots:
        started = time.perf_counter()
        load(bots, bot_port)
        subprocess.run([*PSQL, "-d", DB_NAME, "-c", "VACUUM ANALYZE"], check=True)
        print(f"{bots:,} bots loaded in {time.perf_counter() - started:.0f} s", flush=True)
    else:
        # The bots kept from an earlier run answer at this run's bot server.
        psql_value(
            "UPDATE tournaments_bot SET endpoint_url"
            f" = regexp_replace(endpoint_url, ':[0-9]+/', ':{int(bot_port)}/')"
        )
    from django.db import connection

    from tournaments.models import Ladder, LadderStatus

    Ladder.objects.update(status=LadderStatus.RUNNING)
    connection.close()

    celery = [sys.executable, "-m", "celery", "-A", "config"]
    quiet = ["--without-gossip", "--without-mingle"]
    web_port = free_port()
    control_log = tmp / "control.log"
    roles = [Role("web"), Role("control"), Role("ladder"), Role("bulk"), Role("beat")]
    web, control, ladder, bulk, beat = roles
    web.processes.append(
        spawn(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi",
                "--bind",
                f"127.0.0.1:{web_port}",
                "--workers",
                "2",
                "--threads",
                "4",
                "--worker-class",
                "gthread",
                "--no-control-socket",
            ],
            env,
            tmp / "web.log",
        )
    )
    control.processes.append(
        spawn(
            [
                *celery,
                "worker",
                "-Q",
                QUEUE,
                "-n",
                f"control-{QUEUE}@%h",
                "-P",
                "threads",
                "-c",
                "2",
                "--loglevel",
                "INFO",
                *quiet,
            ],
            env,
            control_log,
        )
    )
    for i in range(args.ladder_workers):
        ladder.processes.append(
            spawn(
                [
                    *celery,
                    "worker",
                    "-Q",
                    f"{QUEUE}.ladder",
                    "-n",
                    f"ladder{i}-{QUEUE}@%h",
                    "-P",
                    "threads",
                    "-c",
                    str(args.threads),
                    "--loglevel",
                    "WARNING",
                    *quiet,
                ],
                env,
                tmp / f"ladder{i}.log",
            )
        )
    bulk.processes.append(
        spawn(
            [
                *celery,
                "worker",
                "-Q",
                f"{QUEUE}.bulk",
                "-n",
                f"bulk-{QUEUE}@%h",
                "-c",
                "1",
                "--loglevel",
                "WARNING",
                *quiet,
            ],
            env,
            tmp / "bulk.log",
        )
    )
    beat.processes.append(
        spawn(
            [*celery, "beat", "-s", str(tmp / "beat"), "--loglevel", "WARNING"],
            env,
            tmp / "beat.log",
        )
    )
    try:
        from django.utils import timezone

        from tournaments.models import Bot, Match, MatchSeat, MatchStatus

        base = Match.objects.filter(ladder__isnull=False, status=MatchStatus.FINISHED).count()
        wait_until(
            lambda: (
                Match.objects.filter(ladder__isnull=False, status=MatchStatus.FINISHED).count()
                > base
            ),
            600,
            "the first ladder match",
        )
        webload = WebLoad(web_port)
        client = threading.Thread(target=webload.run, daemon=True)
        client.start()
        start, start_epoch = read(roles, calls, redis_port), time.time()
        window_start = timezone.now()
        most_connections = 0
        while time.monotonic() - start.at < args.minutes * 60:
            time.sleep(5)
            most_connections = max(
                most_connections,
                int(
                    psql_value(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    )
                ),
            )
        end, end_epoch = read(roles, calls, redis_port), time.time()
        webload.done.set()
        client.join(timeout=60)
        seats = MatchSeat.objects.filter(
            match__ladder__isnull=False,
            match__status=MatchStatus.FINISHED,
            match__finished_at__gte=window_start,
        ).values_list("bot_id", flat=True)
        # Every bot, those that did not play too.
        per_bot = dict.fromkeys(Bot.objects.values_list("pk", flat=True), 0)
        for bot_id in seats:
            per_bot[bot_id] += 1
        same = settle_and_compare()
    finally:
        stop_all(roles)
        redis.terminate()
        bot_server.terminate()
    errors = sum(
        line.count(" ERROR/") + line.count("Traceback")
        for log in tmp.glob("*.log")
        for line in log.read_text(errors="replace").splitlines()
    )
    outcome = Outcome(
        webload,
        task_times(control_log, start_epoch, end_epoch),
        per_bot,
        most_connections,
        errors,
        same,
    )
    report(args, bots, start, end, outcome)
    if not args.keep:
        subprocess.run([*PSQL, "-c", f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)"])
    if errors:
        print(f"\nthe workers logged errors: their logs are kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class Outcome:
    """What the run measured besides the two readings."""

    web: WebLoad
    tasks: dict[str, list[float]]
    per_bot: dict[int, int]
    most_connections: int
    errors: int
    same: bool


def _times(values: Sequence[float]) -> str:
    top = max(values, default=float("nan"))
    return f"{pct(values, 0.5):.1f} / {pct(values, 0.99):.1f} / {top:.1f}"


def report(args: argparse.Namespace, bots: int, start: Reading, end: Reading, out: Outcome) -> None:
    """The run's figures, a row each, as a table for bench/README.md."""
    seconds = end.at - start.at
    matches = end.finished - start.finished
    per = max(matches, 1)
    decisions = end.calls - start.calls
    counts = sorted(out.per_bot.values())
    print(
        f"\n{bots:,} bots, {args.minutes:g} minutes, {args.in_flight} tables in flight, "
        f"{args.ladder_workers} ladder worker(s) of {args.threads} threads"
    )
    rows = [
        ("matches finished", f"{matches:,} ({matches / seconds:.2f}/s)"),
        ("bot decisions", f"{decisions:,} ({decisions / seconds:.0f}/s)"),
        ("failed matches", str(end.failed - start.failed)),
        *(
            (f"CPU s a match, {role}", f"{(end.cpu[role] - start.cpu[role]) / per:.3f}")
            for role in start.cpu
        ),
        ("database bytes a match", f"{(end.db_bytes - start.db_bytes) / per:,.0f}"),
        ("database transactions a match", f"{(end.xacts - start.xacts) / per:.1f}"),
        ("new database connections a match", f"{(end.sessions - start.sessions) / per:.3f}"),
        ("database connections open, most", str(out.most_connections)),
        ("Redis commands a match", f"{(end.redis_commands - start.redis_commands) / per:.1f}"),
    ]
    for task in ("tournaments.top_up_ladders", "tournaments.rate_finished_matches"):
        times = out.tasks.get(task, [])
        rows.append((f"{task.split('.')[1]} ms p50 / p99 / max ({len(times)} runs)", _times(times)))
    for name, times in out.web.times.items():
        rows.append((f"web {name} ms p50 / p99 / max ({len(times)} requests)", _times(times)))
    spread = [float(c) for c in counts]
    rows += [
        ("web errors", str(out.web.errors)),
        (
            "matches per bot min / p10 / median / p90 / max",
            f"{counts[0]} / {pct(spread, 0.1):.0f} / {statistics.median(counts):.0f} / "
            f"{pct(spread, 0.9):.0f} / {counts[-1]}",
        ),
        ("worker errors logged", str(out.errors)),
        ("ratings equal a recompute", "yes" if out.same else "NO"),
    ]
    print("\n| figure | value |\n|---|---|")
    for label, value in rows:
        print(f"| {label} | {value} |")


if __name__ == "__main__":
    main()
