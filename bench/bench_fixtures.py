"""Fixture generation: round robin and duplicate at the sizes a tournament may reach.

Two parts:

- ``anchor``: this tree's ``tournaments/formats`` against the same package at a git revision
  (``--baseline``, default the last revision before the faster grouping), on sizes the old code
  still finishes; each size runs in rounds, old and new taking turns going first (ABBA), and
  every run checks both give the same fixtures. Printed: median CPU seconds of each, min..max,
  and the median of the per-round ratio old/new.
- ``largest``: the current code alone on the largest tournaments the service allows
  (MAX_ENTRIES bots, MAX_FIXTURES matches), median and min..max of ``--rounds`` runs.

CPU time (``time.process_time``), so other work on a shared machine weighs less than on a clock.

    .venv/bin/python -m bench.bench_fixtures anchor [--rounds 3] [--baseline REV]
    .venv/bin/python -m bench.bench_fixtures largest [--rounds 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from bench.support.processes import ROOT
from tournaments import formats

BASELINE = "9148b34732ce7618302e84004f8c8a261583b24a"
FORMAT_FILES = ("__init__.py", "common.py", "round_robin.py", "duplicate.py", "swiss.py")


class Size(NamedTuple):
    """One tournament to schedule."""

    format: str
    bots: int
    table: int
    rounds: int


ANCHOR_SIZES = (
    Size("round_robin", 100, 4, 50),
    Size("round_robin", 200, 4, 20),
    Size("round_robin", 600, 4, 3),
    Size("duplicate", 50, 5, 20),
)
LARGEST_SIZES = (
    Size("round_robin", 200, 4, 1000),  # 50,000 matches
    Size("round_robin", 400, 4, 1000),  # 100,000 matches
    Size("round_robin", 2000, 4, 200),  # 100,000 matches, the most bots
    Size("duplicate", 200, 4, 125),  # 6,250 groups, 25,000 matches
)


def load_baseline(revision: str) -> ModuleType:
    """Import ``tournaments.formats`` as it was at ``revision``, under another name."""
    folder = Path(tempfile.mkdtemp(prefix="formats-"))
    package = folder / "baseline_formats"
    package.mkdir()
    for name in FORMAT_FILES:
        source = subprocess.run(
            ["git", "show", f"{revision}:tournaments/formats/{name}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        package.joinpath(name).write_text(
            source.replace("tournaments.formats.", "baseline_formats.")
        )
    spec = importlib.util.spec_from_file_location(
        "baseline_formats", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_formats"] = module
    spec.loader.exec_module(module)
    return module


def timed(generate: Callable[..., list], size: Size, seed: int) -> tuple[float, list]:
    """CPU seconds to schedule ``size`` with ``generate``, and the fixtures."""
    bots = list(range(1, size.bots + 1))
    start = time.process_time()
    fixtures = generate(bots, size.table, size.rounds, seed)
    return time.process_time() - start, fixtures


def fields(fixture: object) -> tuple:
    """A fixture's fields, comparable across the two packages' classes."""
    names = ("round", "table", "seats", "seed", "duplicate_group")
    return tuple(getattr(fixture, name) for name in names)


def spread(values: list[float]) -> str:
    """Median and min..max of ``values``."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}..{max(values):.2f})"


def anchor(rounds: int, revision: str) -> None:
    """Old and new in ABBA rounds on sizes the old code finishes."""
    old = load_baseline(revision)
    print("| size | matches | old CPU s | new CPU s | old/new (median) |")
    print("|---|---|---|---|---|")
    for size in ANCHOR_SIZES:
        times: dict[str, list[float]] = {"old": [], "new": []}
        ratios = []
        for r in range(rounds):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            outputs = {}
            for which in order:
                module = old if which == "old" else formats
                seconds, outputs[which] = timed(getattr(module, size.format), size, seed=r)
                times[which].append(seconds)
            if list(map(fields, outputs["old"])) != list(map(fields, outputs["new"])):
                raise SystemExit(f"{size}: old and new fixtures differ")
            ratios.append(times["old"][-1] / times["new"][-1])
        label = f"{size.format} {size.bots} bots x{size.table}, {size.rounds} rounds"
        print(
            f"| {label} | {len(outputs['new'])} | {spread(times['old'])} | "
            f"{spread(times['new'])} | {statistics.median(ratios):.1f}x |",
            flush=True,
        )


def largest(rounds: int) -> None:
    """The current code on the largest tournaments allowed."""
    print("| size | matches | CPU s |")
    print("|---|---|---|")
    for size in LARGEST_SIZES:
        times, count = [], 0
        for r in range(rounds):
            seconds, fixtures = timed(getattr(formats, size.format), size, seed=r)
            times.append(seconds)
            count = len(fixtures)
        label = f"{size.format} {size.bots} bots x{size.table}, {size.rounds} rounds"
        print(f"| {label} | {count} | {spread(times)} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("anchor", "largest"))
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--baseline", default=BASELINE)
    args = parser.parse_args()
    if args.part == "anchor":
        anchor(args.rounds or 3, args.baseline)
    else:
        largest(args.rounds or 1)


if __name__ == "__main__":
    main()
