"""A soak of the always-on ladder on the deployment's shape: N bots for M minutes, and its cost.

Run: nice -n 5 .venv/bin/python -m bench.bench_soak [--bots 1000 | --big] [--minutes 10]
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
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.soak.figures import Outcome, Reading, report, task_times
from bench.support.bots import serve_bots
from bench.support.http import WebLoad
from bench.support.processes import ROOT, free_port, process_cpu, redis_server, wait_until

DB_NAME = "ohhell_bench_soak"
DB_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"
PSQL = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-v", "ON_ERROR_STOP=1"]
QUEUE = f"bench-soak-{uuid.uuid4().hex[:8]}"
WEB_PATHS = {"health": "/api/health/", "leaderboard": "/api/leaderboard/?variant=oh-hell"}


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


def settle_and_compare() -> bool:
    """Pause the ladder, cancel its queued tables, let the last ratings be written, and compare
    every rating and history row with a recompute."""
    from tests.support.rating_world import rating_snapshot
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


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--big", action="store_true", help="10,000 bots")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--in-flight", type=int, default=16, help="LADDER_MATCHES_IN_FLIGHT")
    parser.add_argument("--ladder-workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=16, help="threads a ladder worker")
    parser.add_argument("--keep", action="store_true", help="keep the database for a rerun")
    args = parser.parse_args()
    if args.big:
        args.bots = 10_000
    return args


def _environment(redis_port: int, in_flight: int) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": DB_URL,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "CELERY_QUEUE": QUEUE,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-" + "x" * 30,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "BOT_ALLOW_LOOPBACK": "1",
        "LADDER_MATCHES_IN_FLIGHT": str(in_flight),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }


def _prepare_database(args: argparse.Namespace, bot_port: int) -> None:
    """Migrate, load the bots (or keep those of an earlier run with ``--keep``), run the ladder."""
    import django

    kept = subprocess.run([*PSQL, "-d", DB_NAME, "-c", "SELECT 1"], capture_output=True)
    reuse = args.keep and kept.returncode == 0
    if not reuse:
        subprocess.run([*PSQL, "-c", f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)"], check=True)
        subprocess.run([*PSQL, "-c", f"CREATE DATABASE {DB_NAME}"], check=True)
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from tournaments.models import Ladder, LadderStatus

    call_command("migrate", verbosity=0)
    if not reuse or loaded_bots() != args.bots:
        started = time.perf_counter()
        load(args.bots, bot_port)
        subprocess.run([*PSQL, "-d", DB_NAME, "-c", "VACUUM ANALYZE"], check=True)
        print(f"{args.bots:,} bots loaded in {time.perf_counter() - started:.0f} s", flush=True)
    else:
        # The bots kept from an earlier run answer at this run's bot server.
        psql_value(
            "UPDATE tournaments_bot SET endpoint_url"
            f" = regexp_replace(endpoint_url, ':[0-9]+/', ':{int(bot_port)}/')"
        )
    Ladder.objects.update(status=LadderStatus.RUNNING)
    connection.close()


def _worker(queue: str, name: str, pool: list[str], loglevel: str) -> list[str]:
    return [
        sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue,
        "-n", f"{name}-{QUEUE}@%h", *pool, "--loglevel", loglevel,
        "--without-gossip", "--without-mingle",
    ]  # fmt: skip


def _start_deployment(args: argparse.Namespace, env: dict[str, str], tmp: Path) -> list[Role]:
    """Gunicorn, a control, ladder and bulk worker, and beat, each a role of its own."""
    roles = [Role("web"), Role("control"), Role("ladder"), Role("bulk"), Role("beat")]
    web, control, ladder, bulk, beat = roles
    gunicorn = [
        sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{args.web_port}",
        "--workers", "2", "--threads", "4", "--worker-class", "gthread", "--no-control-socket",
    ]  # fmt: skip
    web.processes.append(spawn(gunicorn, env, tmp / "web.log"))
    threads = ["-P", "threads", "-c"]
    control_command = _worker(QUEUE, "control", [*threads, "2"], "INFO")
    control.processes.append(spawn(control_command, env, tmp / "control.log"))
    for i in range(args.ladder_workers):
        command = _worker(f"{QUEUE}.ladder", f"ladder{i}", [*threads, str(args.threads)], "WARNING")
        ladder.processes.append(spawn(command, env, tmp / f"ladder{i}.log"))
    bulk_command = _worker(f"{QUEUE}.bulk", "bulk", ["-c", "1"], "WARNING")
    bulk.processes.append(spawn(bulk_command, env, tmp / "bulk.log"))
    beat_command = [sys.executable, "-m", "celery", "-A", "config", "beat"]
    beat_command += ["-s", str(tmp / "beat"), "--loglevel", "WARNING"]
    beat.processes.append(spawn(beat_command, env, tmp / "beat.log"))
    return roles


def _ladder_finished() -> int:
    from tournaments.models import Match, MatchStatus

    return Match.objects.filter(ladder__isnull=False, status=MatchStatus.FINISHED).count()


def _most_connections(minutes: float, since: float) -> int:
    """Watch the database's open connections every 5 s until the window ends; the most seen."""
    most = 0
    sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
    while time.monotonic() - since < minutes * 60:
        time.sleep(5)
        most = max(most, int(psql_value(sql)))
    return most


def _matches_per_bot(since: datetime) -> dict[int, int]:
    """Ladder matches each bot played since ``since``, every bot counted, those that did not too."""
    from tournaments.models import Bot, MatchSeat, MatchStatus

    seats = MatchSeat.objects.filter(
        match__ladder__isnull=False,
        match__status=MatchStatus.FINISHED,
        match__finished_at__gte=since,
    ).values_list("bot_id", flat=True)
    per_bot = dict.fromkeys(Bot.objects.values_list("pk", flat=True), 0)
    for bot_id in seats:
        per_bot[bot_id] += 1
    return per_bot


def _measure(
    args: argparse.Namespace, roles: list[Role], calls: Any, redis_port: int, tmp: Path
) -> tuple[Reading, Reading, Outcome]:
    """Wait for the first ladder match, then read the counters over the window under web load."""
    from django.utils import timezone

    base = _ladder_finished()
    wait_until(lambda: _ladder_finished() > base, 600, "the first ladder match")
    webload = WebLoad(args.web_port, WEB_PATHS)
    client = threading.Thread(target=webload.run, daemon=True)
    client.start()
    start, start_epoch = read(roles, calls, redis_port), time.time()
    window_start = timezone.now()
    most_connections = _most_connections(args.minutes, start.at)
    end, end_epoch = read(roles, calls, redis_port), time.time()
    webload.done.set()
    client.join(timeout=60)
    per_bot = _matches_per_bot(window_start)
    tasks = task_times(tmp / "control.log", start_epoch, end_epoch)
    outcome = Outcome(webload, tasks, per_bot, most_connections, 0, settle_and_compare())
    return start, end, outcome


def _errors_logged(tmp: Path) -> int:
    return sum(
        line.count(" ERROR/") + line.count("Traceback")
        for log in tmp.glob("*.log")
        for line in log.read_text(errors="replace").splitlines()
    )


def main() -> None:
    args = _arguments()
    context = multiprocessing.get_context("fork")  # before Django or any thread starts
    ready, calls = context.Queue(), context.Value("q", 0)
    bot_server = context.Process(target=serve_bots, args=("127.0.0.1", 0.0, ready, calls))
    bot_server.start()
    bot_port = ready.get(timeout=30)
    tmp = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    redis_port = free_port()
    redis = redis_server("127.0.0.1", redis_port)
    env = _environment(redis_port, args.in_flight)
    os.environ.update(env)
    _prepare_database(args, bot_port)
    args.web_port = free_port()
    roles = _start_deployment(args, env, tmp)
    try:
        start, end, outcome = _measure(args, roles, calls, redis_port, tmp)
    finally:
        stop_all(roles)
        redis.terminate()
        bot_server.terminate()
    outcome.errors = _errors_logged(tmp)
    report(args, args.bots, start, end, outcome)
    if not args.keep:
        subprocess.run([*PSQL, "-c", f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)"])
    if outcome.errors:
        print(f"\nthe workers logged errors: their logs are kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
