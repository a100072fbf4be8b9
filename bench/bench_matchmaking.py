"""Ladder matchmaking against uniform random tables: a simulated 1,000-bot ladder.

Bots have a true strength; a table's result ranks the bots by strength plus Gaussian noise
(TrueSkill's own performance model, with its beta), so a match costs microseconds instead of
an HTTP game. Ratings are real TrueSkill updates (``tournaments.maths.ratings.rate``, the
ladder's own function and parameters). Time is simulated: the ladder keeps ``--in-flight``
tables playing, each match lasts 60 to 180 simulated seconds, and whenever one ends its four
bots are free again and a new table is picked from the free bots by the policy:

- ``matchmaker``: ``tournaments.formats.matchmaking.pick_tables`` with its default parameters,
  as the ladder service calls it (rating, provisional flag, tables in the last day, seats);
- ``slate``: the same, over the ladder's slate only (``matchmaking.slate``: the
  ``LADDER_SLATE_BOTS`` free bots furthest behind their share), as the ladder calls it now;
- ``random``: four free bots drawn uniformly, seats in random order.

Newcomers join at random times in the first half of the run. ``--owners N`` gives each bot an
owner's team key (its id modulo N), which the matchmaker keeps apart (the random anchor does
not). Printed, per policy:

- matches per bot per hour over the run, of the bots there from the start: median, the
  10th and 90th percentiles, and their spread (p90 - p10, and the coefficient of variation);
- time until a newcomer leaves provisional (``tournaments.provisional.provisional_matches()`` rated
  matches): median, p10 and p90 in simulated minutes, and how many had not by the end;
- rank error against true strength after N matches: the mean absolute difference between a
  bot's rank by conservative rating (``tournaments.maths.ratings.conservative``) and by true
  strength, and Kendall's tau between the two orders.

Rounds are paired: both policies play the same bots (strengths, arrival times) from the same
seed, and take turns going first. Figures are medians over rounds, with min..max.

    .venv/bin/python bench/bench_matchmaking.py [--rounds 3] [--bots 1000] [--hours 12] [--owners 0]
"""

from __future__ import annotations

import argparse
import heapq
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.conf import settings

from bench.bench_ratings_quality import order_counts
from tournaments.formats.matchmaking import (
    Candidate,
    pick_tables,
    slate,
    slate_size,
)
from tournaments.maths.ratings import (
    RatingParams,
    conservative,
    rate,
)
from tournaments.provisional import is_provisional, provisional_matches

TABLE = 4
PARAMS = RatingParams()
Policy = Callable[[list["Bot"], random.Random], tuple[int, ...]]


@dataclass
class Bot:
    """A simulated bot: its true strength, its rating and what it has played."""

    id: int
    strength: float
    joined: float
    mu: float = PARAMS.mu
    sigma: float = PARAMS.sigma
    rated: int = 0
    played: int = 0
    seats: list[int] = field(default_factory=lambda: [0] * TABLE)
    settled_at: float | None = None
    teams: frozenset[str] = frozenset()

    def candidate(self) -> Candidate:
        return Candidate(
            id=self.id,
            mu=self.mu,
            sigma=self.sigma,
            provisional=is_provisional(self.rated),
            recent=self.played,
            seats=tuple(self.seats),
            teams=self.teams,
        )


def matchmaker(free: list[Bot], rng: random.Random) -> tuple[int, ...]:
    (table,) = pick_tables([bot.candidate() for bot in free], TABLE, 1, rng)
    return table


def slated(free: list[Bot], rng: random.Random) -> tuple[int, ...]:
    """The matchmaker over the ladder's slate: the free bots furthest behind their share."""
    size = slate_size(TABLE, 1, settings.LADDER_SLATE_BOTS)
    front = slate([bot.candidate() for bot in free], size, rng)
    (table,) = pick_tables(front, TABLE, 1, rng)
    return table


def uniform(free: list[Bot], rng: random.Random) -> tuple[int, ...]:
    return tuple(bot.id for bot in rng.sample(free, TABLE))


POLICIES: dict[str, Policy] = {"matchmaker": matchmaker, "slate": slated, "random": uniform}


@dataclass
class Result:
    rate_p10: float
    rate_p50: float
    rate_p90: float
    rate_cv: float
    settle_p10: float
    settle_p50: float
    settle_p90: float
    unsettled: int
    errors: dict[int, tuple[float, float]]
    matches: int
    seconds: float


def population(seed: int, bots: int, newcomers: int, hours: float, owners: int) -> list[Bot]:
    rng = random.Random(seed)
    field_ = [Bot(i, rng.gauss(25, 8), 0.0) for i in range(bots)]
    field_ += [
        Bot(bots + i, rng.gauss(25, 8), rng.uniform(0, hours * 1800)) for i in range(newcomers)
    ]
    if owners:
        for bot in field_:
            bot.teams = frozenset({f"owner:{bot.id % owners}"})
    return field_


def kendall_tau(values: Sequence[float]) -> float:
    """Kendall's tau of values listed in the true order (index 0 strongest)."""
    right, wrong = order_counts(values)
    return (right - wrong) / (len(values) * (len(values) - 1) // 2)


def rank_error(bots: Sequence[Bot]) -> tuple[float, float]:
    by_rating = sorted(bots, key=lambda b: -conservative(b.mu, b.sigma))
    by_truth = sorted(bots, key=lambda b: -b.strength)
    truth_rank = {b.id: i for i, b in enumerate(by_truth)}
    error = statistics.fmean(abs(i - truth_rank[b.id]) for i, b in enumerate(by_rating))
    right, inverted = order_counts([conservative(b.mu, b.sigma) for b in by_truth])
    pairs = len(bots) * (len(bots) - 1) // 2
    return error, (right - inverted) / pairs  # Kendall's tau against the true order


def simulate(
    policy: Policy,
    seed: int,
    *,
    bots: int,
    newcomers: int,
    hours: float,
    in_flight: int,
    checkpoints: Sequence[int],
    owners: int,
) -> Result:
    started = time.process_time()
    everyone = population(seed, bots, newcomers, hours, owners)
    originals = everyone[:bots]
    by_id = {b.id: b for b in everyone}
    arrivals = sorted((b.joined, b.id) for b in everyone[bots:])
    # Separate streams for the policy and for durations and outcomes.
    pick_rng, world = random.Random(seed * 2 + 1), random.Random(seed * 2 + 2)
    free = {b.id for b in originals}
    events: list[tuple[float, int, tuple[int, ...]]] = []
    end = hours * 3600
    now, made, errors = 0.0, 0, {}
    goal = provisional_matches()

    def start_tables() -> None:
        nonlocal made
        while len(events) < in_flight and len(free) >= TABLE:
            table = policy([by_id[i] for i in sorted(free)], pick_rng)
            free.difference_update(table)
            for seat, bot_id in enumerate(table):
                by_id[bot_id].seats[seat] += 1
                by_id[bot_id].played += 1
            made += 1
            heapq.heappush(events, (now + world.uniform(60, 180), made, table))

    start_tables()
    while events:
        now, _, table = heapq.heappop(events)
        if now > end:
            break
        while arrivals and arrivals[0][0] <= now:
            free.add(arrivals.pop(0)[1])
        seated = [by_id[i] for i in table]
        performance = [b.strength + world.gauss(0, PARAMS.beta) for b in seated]
        ranks = [1 + sum(p > mine for p in performance) for mine in performance]
        after = rate(PARAMS, [(b.mu, b.sigma) for b in seated], ranks)
        for bot, (mu, sigma) in zip(seated, after, strict=True):
            bot.mu, bot.sigma, bot.rated = mu, sigma, bot.rated + 1
            if bot.rated == goal and bot.settled_at is None:
                bot.settled_at = now - bot.joined
        free.update(table)
        rated = made - len(events)
        for checkpoint in checkpoints:
            if checkpoint not in errors and rated >= checkpoint:
                errors[checkpoint] = rank_error(originals)
        start_tables()
    rates = sorted(b.played / hours for b in originals)
    settle = sorted(b.settled_at / 60 for b in everyone[bots:] if b.settled_at is not None)
    q = statistics.quantiles(rates, n=10)
    sq = statistics.quantiles(settle, n=10) if len(settle) >= 2 else [float("nan")] * 9
    return Result(
        rate_p10=q[0],
        rate_p50=statistics.median(rates),
        rate_p90=q[8],
        rate_cv=statistics.pstdev(rates) / statistics.fmean(rates),
        settle_p10=sq[0],
        settle_p50=statistics.median(settle) if settle else float("nan"),
        settle_p90=sq[8],
        unsettled=newcomers - len(settle),
        errors=errors,
        matches=made,
        seconds=time.process_time() - started,
    )


def spread(values: Sequence[float], digits: int = 1) -> str:
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}..{max(values):.{digits}f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--newcomers", type=int, default=50)
    parser.add_argument("--hours", type=float, default=12.0)
    parser.add_argument("--in-flight", type=int, default=40)
    parser.add_argument(
        "--checkpoints", default="2000,5000,10000", help="rank error after these many matches"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--owners", type=int, default=0, help="spread the bots over this many owners (0: none)"
    )
    args = parser.parse_args()
    checkpoints = [int(c) for c in args.checkpoints.split(",")]
    print(
        f"{args.bots} bots (+{args.newcomers} newcomers), {args.hours:g} simulated hours, "
        f"{args.in_flight} tables in flight, tables of {TABLE}, {args.rounds} paired rounds; "
        f"provisional until {provisional_matches()} rated matches",
        flush=True,
    )
    results: dict[str, list[Result]] = {name: [] for name in POLICIES}
    for round_ in range(args.rounds):
        order = list(POLICIES)[round_ % len(POLICIES) :] + list(POLICIES)[: round_ % len(POLICIES)]
        for name in order:
            result = simulate(
                POLICIES[name],
                args.seed + round_,
                bots=args.bots,
                newcomers=args.newcomers,
                hours=args.hours,
                in_flight=args.in_flight,
                checkpoints=checkpoints,
                owners=args.owners,
            )
            results[name].append(result)
            print(
                f"  round {round_ + 1} {name:<10} {result.matches} matches, "
                f"{result.seconds:.0f} s CPU",
                file=sys.stderr,
                flush=True,
            )
    rows: list[tuple[str, Callable[[Result], float], int]] = [
        ("matches/bot/hour, median", lambda r: r.rate_p50, 2),
        ("matches/bot/hour, p10", lambda r: r.rate_p10, 2),
        ("matches/bot/hour, p90", lambda r: r.rate_p90, 2),
        ("matches/bot/hour, p90 - p10", lambda r: r.rate_p90 - r.rate_p10, 2),
        ("matches/bot/hour, coeff. of variation", lambda r: r.rate_cv, 3),
        ("newcomer leaves provisional, median min", lambda r: r.settle_p50, 0),
        ("newcomer leaves provisional, p10 min", lambda r: r.settle_p10, 0),
        ("newcomer leaves provisional, p90 min", lambda r: r.settle_p90, 0),
        ("newcomers still provisional at the end", lambda r: r.unsettled, 0),
    ]
    for checkpoint in checkpoints:
        rows.append((f"mean rank error after {checkpoint} matches", error_at(checkpoint, 0), 1))
        rows.append((f"Kendall tau after {checkpoint} matches", error_at(checkpoint, 1), 3))
    print()
    print(f"| figure (median of {args.rounds} rounds, min..max) | " + " | ".join(POLICIES) + " |")
    print("|---|" + "---|" * len(POLICIES))
    for label, get, digits in rows:
        cells = [spread([get(r) for r in results[name]], digits) for name in POLICIES]
        print(f"| {label} | " + " | ".join(cells) + " |")


def error_at(checkpoint: int, figure: int) -> Callable[[Result], float]:
    """Read one figure of a run's ``errors`` at ``checkpoint`` (NaN where the run has none)."""
    return lambda r: r.errors.get(checkpoint, (float("nan"), float("nan")))[figure]


if __name__ == "__main__":
    main()
