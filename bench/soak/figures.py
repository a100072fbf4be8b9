"""What the soak measures: counters at both ends of the window, task times from the control
worker's log, and the table of figures for bench/README.md."""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.support.http import WebLoad

# The control worker logs each task's run time at INFO (Celery's own line for a task done).
TASK_DONE = re.compile(
    r"^\[(?P<at>[\d-]+ [\d:,]+).*Task (?P<task>tournaments\.\w+)\[[^\]]+\] succeeded in "
    r"(?P<seconds>[\d.e-]+)s"
)


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
