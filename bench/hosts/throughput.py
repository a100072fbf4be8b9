"""Throughput with 1, 2 and 3 hosts in paired rounds, and the ladder sizing it implies."""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench.hosts import BOTS, NAME, SHORT_OPTIONS, TABLE
from bench.hosts.cast import Cast, host_of, start_tournament, tournament_done
from bench.hosts.hub import Host, Load, Queries, Services, read_load, wait_ready
from bench.support.processes import wait_until
from engine.variant import Variant as EngineVariant


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
