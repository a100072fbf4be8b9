"""Ranking quality: how fast and how well TrueSkill orders bots of known strength.

Reference bots of graded strength (the heuristic with rising noise) play 4-seat tables of a
preset. Each repetition (its own base seed) schedules duplicate groups: round-robin tables,
each played in its 4 seat rotations. The same tables and rotations are played twice: with
one deal seed per group (duplicate) and with a fresh deal seed per match (random deals).
Four arms rate them with ``tournaments.rating_math.rate`` in fixture order, no database:

- random deals, each match one update (ranks by points);
- random deals, the group's 4 matches summed into one update (ranks by summed points);
- duplicate, each match one update;
- duplicate, the group as one update (ranks by ``duplicate_differences``).

Random per match -> random summed isolates aggregation (4 matches per update, the luck of
the cards still in); random summed -> duplicate group isolates the luck (same aggregation,
same tables, only the deals differ). Every arm rates the same bots on the same seeds, and
each arm is also rated with a smaller TrueSkill tau.

Measures do not depend on a horizon: Kendall's tau against the true order and the number of
inverted pairs after 100, 200, 400, 800 and 1,600 matches, the share of matches played
while tau >= 0.9, and the first match at which tau reaches 0.9, where a run that never does
is censored at the horizon (counted as "more than"), not dropped. Medians and quartiles over
repetitions. Every game is played once per seed and cached under var/bench/. ``--json``
writes the summary the dashboard's variants page shows. ``--ties`` measures how often two
seats end level on points.

    .venv/bin/python bench/bench_ratings_quality.py --reps 8 --matches 1600 --jobs 2 \\
        --json tournaments/dashboard/ratings-quality.json
    .venv/bin/python bench/bench_ratings_quality.py --no-quality --ties --tie-games 400
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.players import make_player  # noqa: E402
from engine.presets import PRESETS, preset  # noqa: E402
from engine.scoring import shared_ranks  # noqa: E402
from engine.simulate import derive_seed, play_game  # noqa: E402
from tournaments.formats.common import Fixture  # noqa: E402
from tournaments.formats.duplicate import (  # noqa: E402
    DuplicateResult,
    duplicate,
    duplicate_differences,
)
from tournaments.rating_math import RatingParams, conservative, rate  # noqa: E402

# Strongest first: the true order. "coarse" spans the whole range (the search bot uses few
# samples to stay cheap and still beats the noiseless heuristic clearly); "fine" is a harder
# problem: neighbours a few points a game apart against about 21 points of per-game spread.
# The mean points of every bot are printed, so the order can be checked on the same games.
LADDERS: dict[str, tuple[tuple[str, str, dict], ...]] = {
    "coarse": (
        ("search-4", "search", {"samples": 4}),
        ("heuristic-0", "heuristic", {"noise": 0.0}),
        ("heuristic-0.15", "heuristic", {"noise": 0.15}),
        ("heuristic-0.3", "heuristic", {"noise": 0.3}),
        ("heuristic-0.5", "heuristic", {"noise": 0.5}),
        ("heuristic-0.75", "heuristic", {"noise": 0.75}),
        ("random", "random", {}),
    ),
    "fine": tuple(
        (f"heuristic-{x}", "heuristic", {"noise": x})
        for x in (0.0, 0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5)
    ),
}
PAIRS = {name: len(bots) * (len(bots) - 1) // 2 for name, bots in LADDERS.items()}
Bot = tuple[str, str, dict]  # label, player name, player options
TABLE = 4
THRESHOLD = 0.9
CACHE_DIR = ROOT / "var" / "bench"
SAVE_EVERY = 1000

GameKey = tuple[int, tuple[int, ...]]  # (deal seed, bot index per seat)
Scores = list[list[int]]  # scores[seat][deal]


# --- games, played once and cached -----------------------------------------------------


def _play(job: tuple[str, tuple[Bot, ...], int, tuple[int, ...]]) -> tuple[GameKey, Scores, float]:
    variant, bots, seed, seats = job
    started = time.process_time()
    players = [make_player(bots[b][1], derive_seed(seed, b), **bots[b][2]) for b in seats]
    game = play_game(preset(variant), len(seats), seed, players)
    scores = [[deal.scores[s] for deal in game.deals] for s in range(len(seats))]
    return (seed, seats), scores, time.process_time() - started


class GameCache:
    """Per-seat, per-deal scores of every game played so far, by (seed, seats), on disk."""

    def __init__(self, variant: str, bots: tuple[Bot, ...]) -> None:
        spec = json.dumps([variant, TABLE, list(bots)], sort_keys=True).encode()
        digest = hashlib.sha1(spec).hexdigest()[:10]
        self.path = CACHE_DIR / f"ratings-quality-{variant}-{digest}.json"
        self.variant = variant
        self.bots = bots
        self.games: dict[GameKey, Scores] = {}
        if self.path.exists():
            for key, scores in json.loads(self.path.read_text()).items():
                seed, seats = key.split("|")
                self.games[(int(seed), tuple(map(int, seats.split(","))))] = scores

    def fill(self, keys: Iterable[GameKey], jobs: int) -> tuple[int, float]:
        """Play every game not cached yet; return how many were played and their CPU seconds.

        Saved every ``SAVE_EVERY`` games, so an interrupted run keeps what it played.
        """
        missing = sorted(set(keys) - set(self.games))
        tasks = [(self.variant, self.bots, seed, seats) for seed, seats in missing]
        cpu = 0.0
        for start in range(0, len(tasks), SAVE_EVERY):
            batch = tasks[start : start + SAVE_EVERY]
            if jobs > 1:
                with ProcessPoolExecutor(jobs) as pool:
                    done = list(pool.map(_play, batch, chunksize=16))
            else:
                done = list(map(_play, batch))
            for key, scores, seconds in done:
                self.games[key] = scores
                cpu += seconds
            self.save()
        return len(tasks), cpu

    def save(self) -> None:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        data = {f"{s}|{','.join(map(str, seats))}": v for (s, seats), v in self.games.items()}
        self.path.write_text(json.dumps(data, separators=(",", ":")))


# --- tournaments as sequences of rating updates ----------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One rating update: ``matches`` games played, bots by seat, and their ranks."""

    matches: int
    seats: tuple[int, ...]
    ranks: list[int]


@dataclass(frozen=True, slots=True)
class Plan:
    """The fixtures of one repetition: the same groups with one deal each, or fresh deals."""

    duplicate: list[Fixture]
    random: list[Fixture]


def schedule(n: int, rep: int, matches: int) -> Plan:
    """Duplicate groups for ``matches`` games, and the same tables with a new deal every match."""
    base = 1000 + rep
    fixtures = duplicate(list(range(n)), TABLE, math.ceil(matches / n), base)
    fixtures = fixtures[: matches // TABLE * TABLE]
    fresh = [replace(f, seed=derive_seed(base, 1, i)) for i, f in enumerate(fixtures)]
    return Plan(duplicate=fixtures, random=fresh)


def _groups(fixtures: Sequence[Fixture]) -> list[list[Fixture]]:
    groups: dict[str, list[Fixture]] = {}
    for f in fixtures:
        groups.setdefault(f.duplicate_group, []).append(f)
    return list(groups.values())


def per_match_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Step]:
    """Rate each match on its own: ranks by final points."""
    steps = []
    for f in fixtures:
        totals = [sum(deals) for deals in games[(f.seed, f.seats)]]
        steps.append(Step(1, f.seats, shared_ranks(totals)))
    return steps


def summed_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Step]:
    """Rate each group's matches as one update: ranks by each bot's points summed over them."""
    steps = []
    for members in _groups(fixtures):
        points: dict[int, int] = {}
        for f in members:
            for bot, deals in zip(f.seats, games[(f.seed, f.seats)], strict=True):
                points[bot] = points.get(bot, 0) + sum(deals)
        seats = members[0].seats
        steps.append(Step(len(members), seats, shared_ranks([points[b] for b in seats])))
    return steps


def group_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Step]:
    """Rate each duplicate group as one update: ranks by the group's duplicate differences."""
    steps = []
    for members in _groups(fixtures):
        name = members[0].duplicate_group
        results = [DuplicateResult(name, f.seats, games[(f.seed, f.seats)]) for f in members]
        diffs = duplicate_differences(results)
        seats = members[0].seats
        # Sums of means carry float noise; round so an exact tie stays a tie.
        steps.append(Step(len(members), seats, shared_ranks([round(diffs[b], 6) for b in seats])))
    return steps


class Arm(NamedTuple):
    """One way of rating: which games, and how they become updates."""

    games: str  # "random" or "duplicate": a field of Plan
    build: Callable[[Sequence[Fixture], dict[GameKey, Scores]], list[Step]]


ARMS: dict[str, Arm] = {
    "random deals, each match one update": Arm("random", per_match_steps),
    "random deals, 4 matches summed into one update": Arm("random", summed_steps),
    "duplicate, each match one update": Arm("duplicate", per_match_steps),
    "duplicate, group as one update": Arm("duplicate", group_steps),
}
BASE = RatingParams()
# TrueSkill adds tau^2 to every variance before an update so that ratings can follow a bot
# that changes; with a fixed field that only keeps sigma from shrinking.
TAUS: dict[str, RatingParams] = {
    "tau = sigma/100 (default)": BASE,
    "tau = sigma/1000": replace(BASE, tau=BASE.tau / 10),
}
CHECKPOINTS = (100, 200, 400, 800, 1600)


@dataclass(frozen=True, slots=True)
class Quality:
    """The measures of one run of one arm."""

    tau_at: dict[int, float]  # checkpoint -> Kendall tau
    inverted_at: dict[int, int]  # checkpoint -> pairs in the wrong order
    share_good: float  # share of matches played while tau >= THRESHOLD
    first_good: int | None  # first match with tau >= THRESHOLD; None: not within the horizon


def order_counts(values: Sequence[float]) -> tuple[int, int]:
    """Pairs in the true order (index 0 strongest) and pairs inverted; ties count as neither."""
    right = wrong = 0
    for i, j in combinations(range(len(values)), 2):
        right += values[i] > values[j]
        wrong += values[i] < values[j]
    return right, wrong


def measure(n: int, steps: Sequence[Step], params: RatingParams, horizon: int) -> Quality:
    """Apply the steps in order, reading the mu - 3 sigma board after every update."""
    ratings = [(params.mu, params.sigma)] * n
    pairs = n * (n - 1) // 2
    tau, inverted, played = 0.0, 0, 0
    tau_at: dict[int, float] = {}
    inverted_at: dict[int, int] = {}
    good = 0
    first: int | None = None
    marks = [c for c in CHECKPOINTS if c <= horizon]
    for step in steps:
        after = rate(params, [ratings[b] for b in step.seats], step.ranks)
        for b, value in zip(step.seats, after, strict=True):
            ratings[b] = value
        # The board before this update held for the matches of this step.
        while marks and marks[0] <= played:
            tau_at[marks[0]], inverted_at[marks[0]] = tau, inverted
            marks.pop(0)
        good += step.matches if tau >= THRESHOLD else 0
        played += step.matches
        right, inverted = order_counts([conservative(mu, sigma) for mu, sigma in ratings])
        tau = (right - inverted) / pairs
        if first is None and tau >= THRESHOLD:
            first = played
        if played >= horizon:
            break
    for mark in marks:
        tau_at[mark], inverted_at[mark] = tau, inverted
    return Quality(tau_at, inverted_at, good / played, first)


# --- reporting -------------------------------------------------------------------------


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """Lower quartile, median and upper quartile (inclusive method; inf stays inf)."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0], ordered[0], ordered[0]
    q1, q2, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return q1, q2, q3


def _fmt(value: float, digits: int, horizon: int) -> str:
    return f">{horizon}" if math.isinf(value) else f"{value:.{digits}f}"


def summarise(runs: Sequence[Quality], horizon: int) -> dict:
    """Medians and quartiles over repetitions; censored first passages stay censored."""
    marks = [c for c in CHECKPOINTS if c <= horizon]
    firsts = [math.inf if r.first_good is None else float(r.first_good) for r in runs]
    return {
        "tau": {str(c): quartiles([r.tau_at[c] for r in runs]) for c in marks},
        "inverted": {str(c): quartiles([r.inverted_at[c] for r in runs]) for c in marks},
        "share_good": quartiles([r.share_good for r in runs]),
        "first_good": [None if math.isinf(v) else v for v in quartiles(firsts)],
        "censored": sum(r.first_good is None for r in runs),
        "runs": len(runs),
    }


def _spread(q: Sequence[float | None], digits: int, horizon: int = 0) -> str:
    """Median (lower-upper quartile); a censored value reads as more than the horizon."""
    low, mid, high = (math.inf if v is None else v for v in q)
    parts = [_fmt(v, digits, horizon) for v in (mid, low, high)]
    return f"{parts[0]} ({parts[1]}-{parts[2]})"


def quality(args: argparse.Namespace, cache: GameCache) -> None:
    """Play (or read) the games, rate them every way, print the tables, write the summary."""
    n = len(cache.bots)
    plans = [schedule(n, rep, args.matches) for rep in range(args.reps)]
    # Interleaved: the two deals of each fixture are played one after the other.
    keys = [
        (f.seed, f.seats)
        for plan in plans
        for pair in zip(plan.duplicate, plan.random, strict=True)
        for f in pair
    ]
    started = time.perf_counter()
    played, cpu = cache.fill(keys, args.jobs)
    print(
        f"{len(set(keys))} games needed, {played} played now ({cpu:.0f} s CPU, "
        f"{time.perf_counter() - started:.0f} s wall, {args.jobs} process(es)), rest cached"
    )
    strength = _print_strength(cache.bots, plans, cache.games)
    started = time.process_time()
    results: dict[str, dict[str, dict]] = {}
    for tau_name, params in TAUS.items():
        for arm_name, arm in ARMS.items():
            runs = [
                measure(n, arm.build(getattr(plan, arm.games), cache.games), params, args.matches)
                for plan in plans
            ]
            results.setdefault(tau_name, {})[arm_name] = summarise(runs, args.matches)
    print(f"\nrating: {time.process_time() - started:.1f} s CPU, {len(plans)} repetitions")
    for tau_name, arms in results.items():
        _print_tables(args, tau_name, arms)
    if args.json:
        summary = {
            "variant": args.variant,
            "ladder": args.ladder,
            "bots": [label for label, _, _ in cache.bots],
            "mean_points": strength,
            "table": TABLE,
            "reps": args.reps,
            "horizon": args.matches,
            "threshold": THRESHOLD,
            "checkpoints": [c for c in CHECKPOINTS if c <= args.matches],
            "command": " ".join(["bench/bench_ratings_quality.py", *sys.argv[1:]]),
            "results": results,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
        print(f"\nsummary written to {args.json}")


def _print_tables(args: argparse.Namespace, tau_name: str, arms: dict[str, dict]) -> None:
    marks = [c for c in CHECKPOINTS if c <= args.matches]
    head = " | ".join(str(c) for c in marks)
    print(
        f"\n{tau_name}; mu - 3 sigma board; median (quartiles) over {args.reps} repetitions.\n"
        f"\nKendall tau after so many matches:\n\n| arm | {head} |\n|---|" + "---|" * len(marks)
    )
    for arm, s in arms.items():
        print(f"| {arm} | " + " | ".join(_spread(s["tau"][str(c)], 2) for c in marks) + " |")
    print(f"\nInverted pairs (of {PAIRS[args.ladder]}) after so many matches:\n")
    print(f"| arm | {head} |\n|---|" + "---|" * len(marks))
    for arm, s in arms.items():
        print(f"| {arm} | " + " | ".join(_spread(s["inverted"][str(c)], 0) for c in marks) + " |")
    print(f"\nShare of the {args.matches} matches at tau >= {THRESHOLD}, and the first match there")
    print(f"(censored at the horizon: '>{args.matches}' means not reached):\n")
    print("| arm | share of matches | first match at tau >= 0.9 | never reached |")
    print("|---|---|---|---|")
    for arm, s in arms.items():
        print(
            f"| {arm} | {_spread(s['share_good'], 2)} "
            f"| {_spread(s['first_good'], 0, args.matches)} | {s['censored']}/{s['runs']} |"
        )


def _print_strength(
    bots: tuple[Bot, ...], plans: list[Plan], games: dict[GameKey, Scores]
) -> list[float]:
    """Mean final points per bot over the random-deal games, and their tie rate."""
    points: list[list[int]] = [[] for _ in bots]
    for plan in plans:
        for f in plan.random:
            for b, deals in zip(f.seats, games[(f.seed, f.seats)], strict=True):
                points[b].append(sum(deals))
    print("\n| bot | games | mean points ± 95% |")
    print("|---|---|---|")
    for (label, _, _), values in zip(bots, points, strict=True):
        ci = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
        print(f"| {label} | {len(values)} | {statistics.mean(values):.1f} ± {ci:.1f} |")
    totals = [[sum(d) for d in games[(f.seed, f.seats)]] for p in plans for f in p.random]
    share, ci = tie_share(totals)
    print(f"\ngraded field, random deals: {share:.2%} ± {ci:.2%} of seat pairs level on points")
    return [round(statistics.mean(values), 1) for values in points]


# --- ties --------------------------------------------------------------------------------


def tie_share(totals: Sequence[Sequence[int]]) -> tuple[float, float]:
    """Share of seat pairs level on final points, with a 95% interval over games."""
    shares = []
    for row in totals:
        pairs = list(combinations(row, 2))
        shares.append(sum(a == b for a, b in pairs) / len(pairs))
    ci = 1.96 * statistics.stdev(shares) / math.sqrt(len(shares)) if len(shares) > 1 else 0.0
    return statistics.mean(shares), ci


TIE_FIELDS = {
    "equal (4 x heuristic-0)": (1, 1, 1, 1),
    "graded (heuristic 0/0.15/0.3/0.5)": (1, 2, 3, 4),
}


def ties(args: argparse.Namespace) -> None:
    """Tie rate per preset for an equal field and a graded one, 4 seats."""
    print(f"\nTie rate, 4 seats, {args.tie_games} games per preset and field:\n")
    print("| preset | field | seat pairs level | ± 95% |")
    print("|---|---|---|---|")
    for name in PRESETS:
        for field, bots in TIE_FIELDS.items():
            cache = GameCache(name, LADDERS["coarse"])
            keys = [
                (derive_seed(7, i), bots[i % 4 :] + bots[: i % 4]) for i in range(args.tie_games)
            ]
            cache.fill(keys, args.jobs)
            share, ci = tie_share([[sum(d) for d in cache.games[k]] for k in keys])
            print(f"| {name} | {field} | {share:.2%} | {ci:.2%} |")
            sys.stdout.flush()


def main() -> None:
    """Parse the options and run the quality study, the tie study, or both."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="oh-hell")
    parser.add_argument("--ladder", choices=LADDERS, default="fine")
    parser.add_argument("--reps", type=int, default=8, help="independent repetitions")
    parser.add_argument("--matches", type=int, default=1600, help="horizon, matches per run")
    parser.add_argument("--jobs", type=int, default=1, help="processes playing games")
    parser.add_argument("--ties", action="store_true", help="also measure tie rates per preset")
    parser.add_argument("--tie-games", type=int, default=400)
    parser.add_argument("--no-quality", action="store_true", help="only the tie study")
    parser.add_argument("--json", help="write the quality summary to this file")
    args = parser.parse_args()
    bots = LADDERS[args.ladder]
    print(f"{args.variant}, {TABLE} seats, bots strongest first: {[b[0] for b in bots]}")
    if not args.no_quality:
        quality(args, GameCache(args.variant, bots))
    if args.ties:
        ties(args)


if __name__ == "__main__":
    main()
