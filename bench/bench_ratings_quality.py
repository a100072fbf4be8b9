"""Ranking quality: how many matches until TrueSkill orders bots of known strength.

Reference bots of graded strength (search, the heuristic with rising noise, random) play
4-seat tables of a preset. Each repetition (its own base seed) schedules two tournaments of
the same length: random deals (round robin, a fresh seed every match) and duplicate (round
robin tables, each replayed in its 4 seat rotations with one deal seed). Results feed
``tournaments.rating_math.rate`` in fixture order, with no database. The duplicate
tournament is rated two ways: every match on its own (ranks by its final points), or every
group as ONE update whose ranks come from ``duplicate_differences`` (points minus the mean of
the same seat and deal over the rotations), which takes out the luck of the cards.

After every match the leaderboard (by mu - 3 sigma, and by mu) is compared with the true
order by Kendall's tau (tied ratings count as neither concordant nor discordant); a run has
converged at the first match after which tau stays at 0.9 or more up to the horizon. Every
game is played once per seed and cached under var/bench/, so rating variants and repeated
runs reuse it. ``--ties`` also measures how often two seats end level on points.

    .venv/bin/python bench/bench_ratings_quality.py [--reps 8] [--matches 1200] [--jobs 2]
    .venv/bin/python bench/bench_ratings_quality.py --ties --tie-games 400
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.players import make_player  # noqa: E402
from engine.presets import PRESETS, preset  # noqa: E402
from engine.scoring import shared_ranks  # noqa: E402
from engine.simulate import derive_seed, play_game  # noqa: E402
from tournaments.formats.duplicate import (  # noqa: E402
    DuplicateResult,
    duplicate,
    duplicate_differences,
)
from tournaments.formats.round_robin import round_robin  # noqa: E402
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
Bot = tuple[str, str, dict]  # label, player name, player options
TABLE = 4
THRESHOLD = 0.9
CACHE_DIR = ROOT / "var" / "bench"

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
        """Play every game not cached yet; return how many were played and their CPU seconds."""
        missing = sorted(set(keys) - set(self.games))
        tasks = [(self.variant, self.bots, seed, seats) for seed, seats in missing]
        cpu = 0.0
        if jobs > 1 and tasks:
            with ProcessPoolExecutor(jobs) as pool:
                done = list(pool.map(_play, tasks, chunksize=16))
        else:
            done = list(map(_play, tasks))
        for key, scores, seconds in done:
            self.games[key] = scores
            cpu += seconds
        if tasks:
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


def schedules(n: int, rep: int, matches: int) -> dict[str, list]:
    """The random-deal and duplicate fixtures of one repetition, ``matches`` games each."""
    bots = list(range(n))
    base = 1000 + rep
    # "rounds" is matches per bot: n * rounds / TABLE tables in all.
    return {
        "random": round_robin(bots, TABLE, math.ceil(matches * TABLE / len(bots)), base)[:matches],
        "duplicate": duplicate(bots, TABLE, math.ceil(matches / len(bots)), base)[
            : matches // TABLE * TABLE
        ],
    }


def per_match_steps(fixtures: Sequence, games: dict[GameKey, Scores]) -> list[Step]:
    """Rate each match on its own: ranks by final points."""
    steps = []
    for f in fixtures:
        totals = [sum(deals) for deals in games[(f.seed, f.seats)]]
        steps.append(Step(1, f.seats, shared_ranks(totals)))
    return steps


def group_steps(fixtures: Sequence, games: dict[GameKey, Scores]) -> list[Step]:
    """Rate each duplicate group as one update: ranks by the group's duplicate differences."""
    groups: dict[str, list] = {}
    for f in fixtures:
        groups.setdefault(f.duplicate_group, []).append(f)
    steps = []
    for name, members in groups.items():
        results = [DuplicateResult(name, f.seats, games[(f.seed, f.seats)]) for f in members]
        diffs = duplicate_differences(results)
        seats = members[0].seats
        # Sums of means carry float noise; round so an exact tie stays a tie.
        steps.append(Step(len(members), seats, shared_ranks([round(diffs[b], 6) for b in seats])))
    return steps


def kendall_tau(values: Sequence[float]) -> float:
    """Tau against the true order (index 0 strongest); ties count as neither way."""
    pairs = list(combinations(range(len(values)), 2))
    score = sum((values[i] > values[j]) - (values[i] < values[j]) for i, j in pairs)
    return score / len(pairs)


LEADERBOARDS: dict[str, Callable[[float, float], float]] = {
    "mu-3sigma": conservative,
    "mu": lambda mu, sigma: mu,
}


def trace(
    n: int, steps: Sequence[Step], params: RatingParams
) -> dict[str, list[tuple[int, float]]]:
    """Apply the steps in order; return (matches so far, tau) after each, per leaderboard."""
    ratings = [(params.mu, params.sigma)] * n
    out: dict[str, list[tuple[int, float]]] = {name: [] for name in LEADERBOARDS}
    played = 0
    for step in steps:
        after = rate(params, [ratings[b] for b in step.seats], step.ranks)
        for b, value in zip(step.seats, after, strict=True):
            ratings[b] = value
        played += step.matches
        for name, key in LEADERBOARDS.items():
            out[name].append((played, kendall_tau([key(mu, sigma) for mu, sigma in ratings])))
    return out


def converged_at(points: Sequence[tuple[int, float]]) -> int | None:
    """Matches after which tau stays at the threshold or above to the end; None if never."""
    at = None
    for played, tau in points:
        if tau < THRESHOLD:
            at = None
        elif at is None:
            at = played
    return at


# --- reporting -------------------------------------------------------------------------

BASE = RatingParams()
HALF_BETA = replace(BASE, beta=BASE.beta / 2)
# Averaging k rotations takes the luck of the cards out of a group's comparison, so one
# group is a less noisy performance than one match: the same update with half of beta.
METHODS: dict[str, tuple[str, Callable[..., list[Step]], RatingParams]] = {
    "random deals, per match": ("random", per_match_steps, BASE),
    "duplicate, per match": ("duplicate", per_match_steps, BASE),
    "duplicate, group as one update": ("duplicate", group_steps, BASE),
    "duplicate, group as one, beta/2": (
        "duplicate",
        group_steps,
        replace(BASE, beta=BASE.beta / 2),
    ),
}
CHECKPOINTS = (25, 50, 100, 200, 400, 800)


def _spread(values: list[int]) -> str:
    if not values:
        return "- | - | -"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return (
        f"{statistics.mean(values):.0f} ± {sd:.0f} | {statistics.median(values):.0f} "
        f"| {min(values)}-{max(values)}"
    )


def _tau_at(points: Sequence[tuple[int, float]], matches: int) -> float:
    """Tau after the last update that falls within the first ``matches`` matches."""
    last = 0.0
    for played, tau in points:
        if played > matches:
            break
        last = tau
    return last


def quality(args: argparse.Namespace, cache: GameCache) -> None:
    """Run the repetitions and print matches-to-convergence per method and leaderboard."""
    n = len(cache.bots)
    plans = [schedules(n, rep, args.matches) for rep in range(args.reps)]
    keys = [(f.seed, f.seats) for plan in plans for fx in plan.values() for f in fx]
    started = time.perf_counter()
    played, cpu = cache.fill(keys, args.jobs)
    print(
        f"{len(set(keys))} games needed, {played} played now ({cpu:.0f} s CPU, "
        f"{time.perf_counter() - started:.0f} s wall, {args.jobs} process(es)), rest cached"
    )
    _print_strength(cache.bots, plans, cache.games)
    traces: dict[tuple[str, str], list[list[tuple[int, float]]]] = {}
    started = time.process_time()
    for plan in plans:
        for method, (fmt, build, params) in METHODS.items():
            for board, points in trace(n, build(plan[fmt], cache.games), params).items():
                traces.setdefault((method, board), []).append(points)
    print(f"\nrating and tau: {time.process_time() - started:.1f} s CPU, {len(plans)} repetitions")
    _print_convergence(args, traces)
    _print_checkpoints(args, traces)


def _print_convergence(args: argparse.Namespace, traces: dict) -> None:
    print(
        f"\nMatches until Kendall tau >= {THRESHOLD} for good ({args.reps} repetitions, "
        f"horizon {args.matches} matches):\n"
    )
    print("| method | leaderboard | converged | mean ± sd | median | min-max | vs random |")
    print("|---|---|---|---|---|---|---|")
    for board in LEADERBOARDS:
        runs = {m: [converged_at(p) for p in traces[(m, board)]] for m in METHODS}
        base = [v for v in runs["random deals, per match"] if v is not None]
        for method, values in runs.items():
            done = [v for v in values if v is not None]
            ratio = statistics.mean(done) / statistics.mean(base) if done and base else math.nan
            print(
                f"| {method} | {board} | {len(done)}/{len(values)} | {_spread(done)} "
                f"| {ratio:.2f} |"
            )
    print("\nper repetition, mu-3sigma (None: not converged within the horizon):")
    for method in METHODS:
        print(f"  {method:34}", [converged_at(p) for p in traces[(method, "mu-3sigma")]])


def _print_checkpoints(args: argparse.Namespace, traces: dict) -> None:
    marks = [c for c in CHECKPOINTS if c <= args.matches]
    print("\nMean Kendall tau (mu-3sigma) after so many matches:\n")
    print("| method | " + " | ".join(str(c) for c in marks) + " |")
    print("|---|" + "---|" * len(marks))
    for method in METHODS:
        runs = traces[(method, "mu-3sigma")]
        taus = [statistics.mean(_tau_at(p, c) for p in runs) for c in marks]
        print(f"| {method} | " + " | ".join(f"{t:.3f}" for t in taus) + " |")


def _print_strength(
    bots: tuple[Bot, ...], plans: list[dict[str, list]], games: dict[GameKey, Scores]
) -> None:
    """Mean final points per bot over the random-deal games, and their tie rate."""
    points: list[list[int]] = [[] for _ in bots]
    for plan in plans:
        for f in plan["random"]:
            for b, deals in zip(f.seats, games[(f.seed, f.seats)], strict=True):
                points[b].append(sum(deals))
    print("\n| bot | games | mean points ± 95% |")
    print("|---|---|---|")
    for (label, _, _), values in zip(bots, points, strict=True):
        ci = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
        print(f"| {label} | {len(values)} | {statistics.mean(values):.1f} ± {ci:.1f} |")
    totals = [[sum(d) for d in games[(f.seed, f.seats)]] for p in plans for f in p["random"]]
    share, ci = tie_share(totals)
    print(f"\ngraded field, random deals: {share:.2%} ± {ci:.2%} of seat pairs level on points")


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
    parser.add_argument("--ladder", choices=LADDERS, default="coarse")
    parser.add_argument("--reps", type=int, default=8, help="independent repetitions")
    parser.add_argument("--matches", type=int, default=1200, help="horizon, matches per run")
    parser.add_argument("--jobs", type=int, default=1, help="processes playing games")
    parser.add_argument("--ties", action="store_true", help="also measure tie rates per preset")
    parser.add_argument("--tie-games", type=int, default=400)
    parser.add_argument("--no-quality", action="store_true", help="only the tie study")
    args = parser.parse_args()
    bots = LADDERS[args.ladder]
    print(f"{args.variant}, {TABLE} seats, bots strongest first: {[b[0] for b in bots]}")
    if not args.no_quality:
        quality(args, GameCache(args.variant, bots))
    if args.ties:
        ties(args)


if __name__ == "__main__":
    main()
