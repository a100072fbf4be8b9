"""Measure the strength order of the reference players: heuristic > random, search > heuristic.

Two types share a table two seats each, seats rotating every game so seat position cancels.
Each game is one sample: averages come with 95% confidence intervals over games, and the
margin is the per-game difference between the two types (a paired comparison).

    .venv/bin/python -m bench.bench_players --games 1000 --samples 16 --jobs 1
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from engine.presets import preset
from engine.simulate import Summary, simulate

MATCHUPS = {
    "heuristic-vs-random": ("heuristic", "random"),
    "search-vs-heuristic": ("search", "heuristic"),
}


def _chunk(args: tuple[str, int, int, int, int, int, tuple[str, ...]]) -> Summary:
    variant_name, players, seed, start, games, samples, names = args
    options = {"search": {"samples": samples}}
    return simulate(preset(variant_name), players, seed, names, games, options=options, start=start)


def run(
    matchup: str, variant: str, players: int, games: int, seed: int, samples: int, jobs: int
) -> tuple[Summary, float]:
    """Play one matchup split into chunks over ``jobs`` processes; return the summary and time."""
    a, b = MATCHUPS[matchup]
    names = tuple((a, b) * (players // 2) + ((a,) if players % 2 else ()))
    size = math.ceil(games / max(1, jobs * 4))
    tasks = [
        (variant, players, seed, s, min(size, games - s), samples, names)
        for s in range(0, games, size)
    ]
    started = time.perf_counter()
    summary = Summary()
    if jobs == 1:
        parts = list(map(_chunk, tasks))
    else:
        with ProcessPoolExecutor(jobs) as pool:
            parts = list(pool.map(_chunk, tasks))
    for part in parts:
        summary.merge(part)
    return summary, time.perf_counter() - started


def _interval(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def report(matchup: str, summary: Summary, seconds: float) -> None:
    """Print a markdown table of the matchup, and the paired margin of the first type."""
    a, b = MATCHUPS[matchup]
    print(f"\n### {matchup}: {summary.games} games, {summary.deals} deals, {seconds:.0f} s\n")
    print("| player | mean score | mean rank | win share | exact bids |")
    print("|---|---|---|---|---|")
    for r in summary.table():
        print(
            f"| {r['player']} | {r['mean_score']:.1f} ± {r['mean_score_ci95']:.1f} "
            f"| {r['mean_rank']:.3f} ± {r['mean_rank_ci95']:.3f} "
            f"| {r['win_share']:.3f} ± {r['win_share_ci95']:.3f} | {r['exact_bid_rate']:.1%} |"
        )
    sa, sb = summary.stats[a], summary.stats[b]
    margin, ci = _interval([x - y for x, y in zip(sa.scores, sb.scores, strict=True)])
    print(f"\nmargin of {a} over {b}: {margin:+.1f} ± {ci:.1f} points a game (95% CI)")


def main() -> None:
    """Run the matchups asked for and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matchup", choices=[*MATCHUPS, "all"], default="all")
    parser.add_argument("--variant", default="oh-hell")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--samples", type=int, default=16, help="search: deals per decision")
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    args = parser.parse_args()
    chosen = list(MATCHUPS) if args.matchup == "all" else [args.matchup]
    print(
        f"{args.variant}, {args.players} players, seed {args.seed}, "
        f"search samples {args.samples}, {args.jobs} process(es)"
    )
    for matchup in chosen:
        summary, seconds = run(
            matchup, args.variant, args.players, args.games, args.seed, args.samples, args.jobs
        )
        report(matchup, summary, seconds)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
