"""The largest round robin starting while a ladder plays and verifications run: their pace with
and without the start.

Run: nice -n 10 .venv/bin/python -m bench.bench_big_start [--rounds 2] [--window 60]
    [--entrants 200] [--tournament-rounds 1000] [--ladder-bots 8]

Needs PostgreSQL (``DATABASE_URL``, migrated here if need be) and Redis (``REDIS_URL``). The
workers are the deployment's (docker/compose.yaml) on a queue of the run's own: a control
worker (``-c 2``), a ladder worker (``-P threads -c 8``), a bulk worker (``-c 1``) and beat.
No match worker runs, so the tournament's matches wait in its window and the figures show the
start alone (its counting, the making of its fixtures on the bulk worker, and the database
they share), not the CPU its matches would take from the ladder on this 2-core machine.

The ladder's bots are reference players ("random") served by one ``python -m arena serve``,
each with an owner of its own; the tournament's entrants are never called. Each round runs
two arms, in an order rotated by round:

- ``quiet``: the ladder and the verifications alone for ``--window`` seconds (the anchor);
- ``start``: the organiser starts a round robin of ``--entrants`` bots and
  ``--tournament-rounds`` rounds (200 x 1,000 is 50,000 matches, the largest shape the limits
  allow for 200 entrants), and the same window is measured from that moment. After the window
  the run waits for the tournament to be running (every fixture made), and cancels it, so the
  next arm inherits no work.

Figures: the ladder's finished matches per minute in the window, and the latency of a
verification asked every 3 s (request to outcome in the database, polled every 20 ms), median
and max; the start call's own time, the time until its first match is sent to the matches
queue (claimable by a worker; polled every 20 ms from another thread), and the time until the
tournament is running (every fixture made: before fixtures were made in stretches, the first
match waited for that). Medians and ranges over rounds, and each start arm's ratio to the quiet
arm of its round.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.support.processes import ROOT

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ["BOT_ALLOW_LOOPBACK"] = "1"
QUEUE = f"bench-start-{uuid.uuid4().hex[:8]}"
os.environ["CELERY_QUEUE"] = QUEUE

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from tests.support.users import make_confirmed_user  # noqa: E402
from tournaments.models import (  # noqa: E402
    Bot,
    BotHealthCheck,
    BotStatus,
    Ladder,
    Match,
    MatchStatus,
    SharedHost,
    Tournament,
    TournamentStatus,
    Variant,
)
from tournaments.services.bots import bot_verify_request  # noqa: E402
from tournaments.services.ladders import ladder_ensure_default  # noqa: E402
from tournaments.services.tournaments import (  # noqa: E402
    tournament_cancel,
    tournament_create,
    tournament_start,
)
from tournaments.services.variants import variants_seed_presets  # noqa: E402

ARMS = ("quiet", "start")
PREFIX = "bench-start"
VERIFY_EVERY_S = 3.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spawn(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)


def start_services(beat_dir: Path) -> list[subprocess.Popen[bytes]]:
    """The deployment's workers and beat on the run's queue (docker/compose.yaml)."""
    env = {**os.environ, "LADDER_MATCHES_IN_FLIGHT": "2"}
    celery = [sys.executable, "-m", "celery", "-A", "config"]
    quiet = ["--loglevel", "ERROR", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    workers = [
        ["-Q", QUEUE, "-n", f"control-{QUEUE}@%h", "-c", "2"],
        ["-Q", f"{QUEUE}.ladder", "-n", f"ladder-{QUEUE}@%h", "-P", "threads", "-c", "8"],
        ["-Q", f"{QUEUE}.bulk", "-n", f"bulk-{QUEUE}@%h", "-c", "1"],
    ]
    processes = [spawn([*celery, "worker", *args, *quiet], env) for args in workers]
    beat = [*celery, "beat", "-s", str(beat_dir / "beat"), "--loglevel", "ERROR"]
    processes.append(spawn(beat, env))
    return processes


def owner_named(name: str) -> User:
    user = User.objects.filter(username=name).first()
    return user if user is not None else make_confirmed_user(name)


@dataclass(frozen=True)
class Field:
    """What the arms share: the ladder, its bots' server, the verified probe and the entrants."""

    ladder: Ladder
    probe: Bot
    entrants: list[int]
    organiser: User
    variant: Variant


def bot_at(name: str, url: str, owner: User) -> Bot:
    """The bench's bot ``name``, active at ``url`` (a run before may have made it)."""
    bot, _ = Bot.objects.update_or_create(
        name=name,
        owner=owner,
        defaults={"endpoint_url": url, "secret": f"secret-{name}", "status": BotStatus.ACTIVE},
    )
    return bot


def make_field(base: str, ladder_bots: int, entrants: int) -> Field:
    variants_seed_presets()
    ladder = ladder_ensure_default()
    if ladder is None:
        raise SystemExit("the oh-hell preset is missing")
    SharedHost.objects.get_or_create(address="127.0.0.1")
    for n in range(ladder_bots):
        bot_at(f"{PREFIX}-ladder-{n}", f"{base}/ladder/{n}", owner_named(f"{PREFIX}-owner-{n}"))
    Bot.objects.filter(name__startswith=f"{PREFIX}-ladder-").update(ladder_opt_in=True)
    probe = bot_at(f"{PREFIX}-probe", f"{base}/probe", owner_named(f"{PREFIX}-prober"))
    organiser = owner_named(f"{PREFIX}-organiser")
    made = [
        bot_at(f"{PREFIX}-entrant-{i}", f"https://entrant{i}.example.org/play", organiser)
        for i in range(entrants)
    ]
    Bot.objects.filter(pk__in=[b.pk for b in made]).update(accept_invitations=True)
    return Field(
        ladder=ladder,
        probe=probe,
        entrants=[b.pk for b in made],
        organiser=organiser,
        variant=ladder.variant,
    )


@dataclass(frozen=True)
class ArmResult:
    ladder_per_min: float
    verify_median_s: float
    verify_max_s: float
    start_call_s: float | None
    first_match_s: float | None
    made_s: float | None


def finished_ladder_matches(ladder: Ladder) -> int:
    return Match.objects.filter(ladder=ladder, status=MatchStatus.FINISHED).count()


def check_decided(pk: int) -> bool:
    return BotHealthCheck.objects.get(pk=pk).ok is not None


def measure_window(field: Field, window: float) -> tuple[float, list[float]]:
    """The ladder's matches per minute and the verification latencies over ``window`` s."""
    started = time.monotonic()
    before = finished_ladder_matches(field.ladder)
    latencies = []
    while time.monotonic() - started < window:
        asked = time.monotonic()
        check_pk = bot_verify_request(bot=field.probe, counted=False).pk
        wait_until(functools.partial(check_decided, check_pk), 600, "a check")
        latencies.append(time.monotonic() - asked)
        time.sleep(max(0.0, VERIFY_EVERY_S - (time.monotonic() - asked)))
    elapsed = time.monotonic() - started
    played = finished_ladder_matches(field.ladder) - before
    return played * 60 / elapsed, latencies


def first_match_clock(tournament_id: int, began: float, into: list[float]) -> threading.Thread:
    """Time, from ``began``, until the tournament's first match is sent (in a thread)."""

    def watch() -> None:
        try:
            sent = Match.objects.filter(tournament_id=tournament_id, unsent=False)
            wait_until(sent.exists, 1800, "the first match")
            into.append(time.monotonic() - began)
        finally:
            connection.close()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def run_arm(arm: str, field: Field, args: argparse.Namespace) -> ArmResult:
    start_call_s = made_s = None
    first: list[float] = []
    tournament = None
    if arm == "start":
        tournament = tournament_create(
            organiser=field.organiser,
            name=f"{PREFIX}-{uuid.uuid4().hex[:6]}",
            variant=field.variant,
            format="round_robin",
            bot_ids=field.entrants,
            rounds=args.tournament_rounds,
        )
        began = time.monotonic()
        clock = first_match_clock(tournament.pk, began, first)
        with transaction.atomic():
            tournament_start(tournament=tournament)
        start_call_s = time.monotonic() - began
    rate, latencies = measure_window(field, args.window)
    if tournament is not None:
        wait_until(
            lambda: Tournament.objects.get(pk=tournament.pk).status != TournamentStatus.STARTING,
            1800,
            "the fixtures",
        )
        clock.join(timeout=60)
        tournament.refresh_from_db()
        assert tournament.started_at is not None
        made_s = (timezone.now() - tournament.started_at).total_seconds()
        with transaction.atomic():
            tournament_cancel(tournament=tournament)
    return ArmResult(
        ladder_per_min=rate,
        verify_median_s=statistics.median(latencies),
        verify_max_s=max(latencies),
        start_call_s=start_call_s,
        first_match_s=first[0] if first else None,
        made_s=made_s,
    )


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--window", type=float, default=60)
    parser.add_argument("--entrants", type=int, default=200)
    parser.add_argument("--tournament-rounds", type=int, default=1000)
    parser.add_argument("--ladder-bots", type=int, default=8)
    args = parser.parse_args()
    if not settings.REDIS_URL or "postgres" not in str(settings.DATABASES["default"]["ENGINE"]):
        raise SystemExit("needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    call_command("migrate", verbosity=0)
    port = free_port()
    server = spawn(
        [sys.executable, "-m", "arena", "serve", "--player", "random", "--port", str(port)],
        dict(os.environ),
    )
    field = make_field(f"http://127.0.0.1:{port}", args.ladder_bots, args.entrants)
    results: dict[str, list[ArmResult]] = {arm: [] for arm in ARMS}
    with tempfile.TemporaryDirectory() as beat_dir:
        services = start_services(Path(beat_dir))
        try:
            # The ladder is playing and the workers consume before any arm starts.
            wait_until(lambda: finished_ladder_matches(field.ladder) >= 2, 300, "the ladder")
            for round_no in range(args.rounds):
                order = ARMS[round_no % 2 :] + ARMS[: round_no % 2]
                for arm in order:
                    results[arm].append(run_arm(arm, field, args))
                line = ", ".join(
                    f"{a} {results[a][-1].ladder_per_min:.1f} ladder matches/min, "
                    f"verify {results[a][-1].verify_median_s:.2f} s"
                    for a in ARMS
                )
                print(f"round {round_no + 1}: {line}", flush=True)
        finally:
            for process in [*services, server]:
                stop(process)
    print(
        f"\n{args.entrants} entrants x {args.tournament_rounds} rounds, "
        f"{args.ladder_bots} ladder bots, window {args.window:.0f} s, {args.rounds} rounds"
    )
    for arm in ARMS:
        arm_results = results[arm]
        print(
            f"{arm:>6}: ladder {spread([r.ladder_per_min for r in arm_results])} matches/min; "
            f"verification median {spread([r.verify_median_s for r in arm_results])} s, "
            f"max {spread([r.verify_max_s for r in arm_results])} s"
        )
    pairs = list(zip(results["start"], results["quiet"], strict=True))
    print(
        "start / quiet: ladder pace "
        + spread([s.ladder_per_min / q.ladder_per_min for s, q in pairs])
        + ", verification median "
        + spread([s.verify_median_s / q.verify_median_s for s, q in pairs])
    )
    print(
        "start call "
        + spread([r.start_call_s for r in results["start"] if r.start_call_s is not None])
        + " s; first match sent after "
        + spread([r.first_match_s for r in results["start"] if r.first_match_s is not None])
        + " s; every fixture made after "
        + spread([r.made_s for r in results["start"] if r.made_s is not None])
        + " s"
    )


if __name__ == "__main__":
    main()
