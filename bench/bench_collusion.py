"""Collusion detection: how soon rings and pairs are flagged, how often honest bots are, and what
a scan of 10,000 bots' sums costs.

``detect`` mode. A field of honest graded bots (the heuristic with noise rising evenly from 0 to
1) holds three planted groups, each a mid-field beneficiary (noise 0.45) and its partners (the
same noise): a ring of 10 partners, a ring of 3, and a single pair. A partner sees its
beneficiary's hand whenever both sit at a table and plays to let it make its bid, sacrificing
its own (engine/players/colluding.py); otherwise it plays as the heuristic. Each beneficiary
plays only its own tables, at each of which one of its partners (drawn at random) takes a seat
with the chance ``--seated``, the other seats drawn from the rest of the field; between two
rounds of beneficiary tables ``--field`` tables of four drawn from everyone else are played.
Every table is one game of a preset dealt from a seed of its own and rated by TrueSkill in
order, its tables added to the running sums with the ratings before it, as the platform does
(tournaments/services/collusion_totals.py). When the beneficiaries have played each checkpoint's
tables, the sums are scanned (tournaments.maths.collusion.scan, what the platform runs) at each
false-discovery rate and ``min_repeat`` asked for. Reported per checkpoint and setting:

- per planted group, the runs in which it was caught: its beneficiary flagged as a bot, or a
  pair of it flagged the right way round (beneficiary and partner as planted);
- the false-positive rate per honest bot: honest bots named by any flag (a bot flag, or either
  role of a pair flag) over honest bots, pooled, with the median and range over runs.

    nice -n 10 .venv/bin/python -m bench.bench_collusion --bots 50 --reps 10 --jobs 2

``scale`` mode. Sums of a ladder-like history of ``--bots`` bots (each table four bots of
neighbouring strength, so table-mates meet again; finishes drawn Plackett-Luce) are built in
memory, then the pairs a scan reads (those with ``min_repeat`` tables or more) are scanned;
the scan's wall time and its peak memory (tracemalloc) are reported, median and range over
``--reps``, with building the sums (the anchor) timed in the same run.

    nice -n 10 .venv/bin/python -m bench.bench_collusion --mode scale --bots 10000 --reps 3
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from engine.game import Game, Phase
from engine.players import HeuristicPlayer
from engine.players.colluding import HelpingPlayer
from engine.presets import preset
from engine.simulate import derive_seed
from tournaments.maths.collusion import Totals, Verdict, rating_chance, scan
from tournaments.maths.intervals import Finish
from tournaments.maths.ratings import RatingParams, rate

TABLE = 4
MID_NOISE = 0.45
GROUPS = {"ring-10": 10, "ring-3": 3, "pair": 1}  # partners of each planted beneficiary


@dataclass(frozen=True, slots=True)
class Field:
    """Noise of every bot; each planted group's beneficiary and partners; the honest bots."""

    noise: tuple[float, ...]
    groups: dict[str, tuple[int, tuple[int, ...]]]
    honest: tuple[int, ...]

    def helps(self, bot: int) -> int | None:
        """The beneficiary a partner helps, or None."""
        for beneficiary, partners in self.groups.values():
            if bot in partners:
                return beneficiary
        return None


def make_field(bots: int) -> Field:
    """Honest bots graded from noise 0 to 1, then each group's beneficiary and partners."""
    planted = sum(1 + n for n in GROUPS.values())
    honest = bots - planted
    noise = [i / max(1, honest - 1) for i in range(honest)]
    groups: dict[str, tuple[int, tuple[int, ...]]] = {}
    for name, partners in GROUPS.items():
        beneficiary = len(noise)
        noise += [MID_NOISE] * (1 + partners)
        groups[name] = (beneficiary, tuple(range(beneficiary + 1, beneficiary + 1 + partners)))
    return Field(tuple(noise), groups, tuple(range(honest)))


Job = tuple[str, int, tuple[int, ...], tuple[float, ...], tuple[int | None, ...]]


def play_table(job: Job) -> tuple[int, ...]:
    """Play one table and return its places by seat. ``helps`` names, per seat, the seat of the
    beneficiary that seat's player helps (None for an honest seat)."""
    variant, seed, seats, noise, helps = job
    game = Game(preset(variant), len(seats), seed)
    players = [
        (HelpingPlayer if helps[s] is not None else HeuristicPlayer)(
            derive_seed(seed, s), noise=noise[s]
        )
        for s in range(len(seats))
    ]
    while not game.is_over:
        seat = game.acting_seat
        player = players[seat]
        obs = game.observation(seat)
        if game.phase is Phase.BID:
            game.bid(player.bid(obs, game.legal_bids()), seat)
            continue
        partner = helps[seat]
        if isinstance(player, HelpingPlayer) and partner is not None:
            hand = game.observation(partner)["hand"]
            game.play(player.play_for(obs, game.legal_cards(), partner, hand), seat)
        else:
            game.play(player.play(obs, game.legal_cards()), seat)
    return tuple(game.ranks())


def schedule(field: Field, rep: int, rounds: int, between: int, seated: float) -> list[Finish]:
    """The tables of one run, in order, as unplayed finishes (places all 1): each round one
    table per beneficiary, then ``between`` field tables. A table's bots are in seat order."""
    rng = random.Random(derive_seed(7000 + rep, 0))
    beneficiaries = {b for b, _ in field.groups.values()}
    others = [b for b in range(len(field.noise)) if b not in beneficiaries]
    tables: list[tuple[int, ...]] = []
    for _ in range(rounds):
        for beneficiary, partners in field.groups.values():
            pool = [b for b in others if b not in partners]
            seats = [beneficiary, *rng.sample(pool, TABLE - 1)]
            if rng.random() < seated:
                seats[1] = rng.choice(partners)
            rng.shuffle(seats)
            tables.append(tuple(seats))
        tables += [tuple(rng.sample(others, TABLE)) for _ in range(between)]
    return [Finish(bots=t, places=(1,) * TABLE) for t in tables]


def jobs(field: Field, variant: str, rep: int, tables: Sequence[Finish]) -> Iterator[Job]:
    """Each table's game: its seed, seats, noises, and who helps whom by seat."""
    for t, table in enumerate(tables):
        helps = tuple(
            table.bots.index(h) if (h := field.helps(b)) is not None and h in table.bots else None
            for b in table.bots
        )
        noise = tuple(field.noise[b] for b in table.bots)
        yield (variant, derive_seed(7000 + rep, 1, t), table.bots, noise, helps)


@dataclass(frozen=True, slots=True)
class Judged:
    """One scan's verdict: per group whether caught, and the honest bots named by a flag."""

    caught: dict[str, bool]
    honest_flagged: int


def judge(field: Field, verdict: Verdict) -> Judged:
    """Whether each planted group was caught, and how many honest bots any flag named."""
    bots = {e.bot for e in verdict.bots if e.flagged}
    pairs = {(e.beneficiary, e.partner) for e in verdict.pairs if e.flagged}
    caught = {
        name: beneficiary in bots or any((beneficiary, p) in pairs for p in partners)
        for name, (beneficiary, partners) in field.groups.items()
    }
    named = bots | {b for pair in pairs for b in pair}
    return Judged(caught, len(named & set(field.honest)))


def run(
    field: Field, rep: int, args: argparse.Namespace, settings: list[tuple[float, int]]
) -> dict[tuple[int, float, int], Judged]:
    """Play one run and scan at each checkpoint with each (rate, min_repeat)."""
    checkpoints = sorted(int(c) for c in args.checkpoints.split(","))
    tables = schedule(field, rep, checkpoints[-1], args.field, args.seated)
    work = list(jobs(field, args.variant, rep, tables))
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            places = list(pool.map(play_table, work, chunksize=32))
    else:
        places = [play_table(job) for job in work]
    params = RatingParams()
    ratings = {b: (params.mu, params.sigma) for b in range(len(field.noise))}
    totals = Totals()
    per_round = len(field.groups) + args.field
    found: dict[tuple[int, float, int], Judged] = {}
    for t, (table, ranks) in enumerate(zip(tables, places, strict=True)):
        totals.add([Finish(bots=table.bots, places=ranks)], _chance(ratings, params.beta))
        after = rate(params, [ratings[b] for b in table.bots], list(ranks))
        ratings.update(zip(table.bots, after, strict=True))
        if (t + 1) % per_round == 0 and (t + 1) // per_round in checkpoints:
            for rate_, repeat in settings:
                verdict = scan(
                    totals,
                    min_tables=args.min_tables,
                    min_repeat=repeat,
                    false_discovery_rate=rate_,
                )
                found[(t + 1) // per_round, rate_, repeat] = judge(field, verdict)
    return found


def _chance(ratings: dict[int, tuple[float, float]], beta: float) -> Callable[[int, int], float]:
    """The chances the ratings as they stand give (read before the table is rated)."""

    def chance(x: int, y: int) -> float:
        return rating_chance(*ratings[x], *ratings[y], beta)

    return chance


def _rate(values: Sequence[int], honest: int) -> str:
    rates = [v / honest for v in values]
    pooled = sum(values) / (honest * len(values))
    return (
        f"{100 * pooled:5.2f}% (median {100 * statistics.median(rates):.2f}%, "
        f"{100 * min(rates):.2f}-{100 * max(rates):.2f}%)"
    )


def detect_mode(args: argparse.Namespace) -> None:
    field = make_field(args.bots)
    rates = [float(r) for r in args.rates.split(",")]
    repeats = [int(r) for r in args.min_repeat.split(",")]
    settings = [(r, m) for r in rates for m in repeats]
    print(
        f"field: {args.bots} bots, {len(field.honest)} honest (noise 0 to 1); groups "
        f"{GROUPS} at noise {MID_NOISE}; partner seated at {args.seated:.0%} of a "
        f"beneficiary's tables; {args.field} field tables a round; min tables {args.min_tables}"
    )
    results: list[dict[tuple[int, float, int], Judged]] = []
    wall = time.monotonic()
    for rep in range(args.reps):
        results.append(run(field, rep, args, settings))
        print(f"  run {rep + 1} done, {time.monotonic() - wall:.0f} s", flush=True)
        report(field, results)


def report(field: Field, results: list[dict[tuple[int, float, int], Judged]]) -> None:
    """The table of the runs so far."""
    print(f"\nafter {len(results)} runs")
    print("beneficiary tables  FDR     min_repeat  " + "  ".join(f"{g:>8}" for g in GROUPS), end="")
    print("  honest bots flagged")
    for key in sorted(results[0]):
        rows = [r[key] for r in results]
        cells = [f"{sum(j.caught[g] for j in rows)}/{len(rows)}" for g in GROUPS]
        honest = _rate([j.honest_flagged for j in rows], len(field.honest))
        print(
            f"{key[0]:18d}  {key[1]:<6}  {key[2]:10d}  " + "  ".join(f"{c:>8}" for c in cells),
            end="",
        )
        print(f"  {honest}", flush=True)


def ladder_sums(bots: int, tables_each: int, window: int, seed: int) -> Totals:
    """Sums of a ladder-like history: each table four bots within ``window`` of each other by
    strength, places drawn Plackett-Luce (log-strengths 1 to -1), chances from the strengths."""
    rng = random.Random(seed)
    strength = [1.0 - 2.0 * b / max(1, bots - 1) for b in range(bots)]

    def chance(x: int, y: int) -> float:
        return 1.0 / (1.0 + math.exp(strength[y] - strength[x]))

    totals = Totals()
    for _ in range(bots * tables_each // TABLE):
        low = rng.randrange(0, bots - window)
        table = rng.sample(range(low, low + window), TABLE)
        left, order = list(table), []
        while left:
            pick = rng.choices(left, weights=[math.exp(strength[b]) for b in left])[0]
            order.append(pick)
            left.remove(pick)
        places = tuple(order.index(b) + 1 for b in table)
        totals.add([Finish(bots=tuple(table), places=places)], chance)
    return totals


def scale_mode(args: argparse.Namespace) -> None:
    repeat = int(args.min_repeat.split(",")[0])
    rate_ = float(args.rates.split(",")[0])
    print(
        f"{args.bots} bots, {args.tables_each} tables each, table-mates within {args.window}; "
        f"min repeat {repeat}, min tables {args.min_tables}, FDR {rate_}"
    )
    builds, scans, peaks = [], [], []
    for rep in range(args.reps):
        started = time.monotonic()
        totals = ladder_sums(args.bots, args.tables_each, args.window, seed=rep)
        builds.append(time.monotonic() - started)
        # What the platform's scan reads: every bot's sums, the pairs that met min_repeat times.
        read = Totals()
        read.bots.update(totals.bots)
        read.pairs.update((k, v) for k, v in totals.pairs.items() if v.gap.n >= repeat)
        stored, kept = len(totals.pairs), len(read.pairs)
        del totals
        tracemalloc.start()
        started = time.monotonic()
        verdict = scan(
            read, min_tables=args.min_tables, min_repeat=repeat, false_discovery_rate=rate_
        )
        scans.append(time.monotonic() - started)
        peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
        tracemalloc.stop()
        flagged = sum(e.flagged for e in verdict.bots) + sum(e.flagged for e in verdict.pairs)
        print(
            f"  run {rep + 1}: {stored} pair sums stored, {kept} read; {len(verdict.pairs)} pairs "
            f"and {len(verdict.bots)} bots tested, {flagged} flagged (honest field)",
            flush=True,
        )

    def spread(values: list[float], unit: str) -> str:
        return (
            f"median {statistics.median(values):.1f} {unit} ({min(values):.1f}-{max(values):.1f})"
        )

    print(f"building the sums (anchor): {spread(builds, 's')}")
    print(f"scan: {spread(scans, 's')}; its peak memory above the sums read {spread(peaks, 'MiB')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["detect", "scale"], default="detect")
    parser.add_argument("--variant", default="oh-hell")
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--checkpoints", default="50,100,200,300", help="beneficiary tables")
    parser.add_argument("--field", type=int, default=4, help="field tables a round")
    parser.add_argument("--seated", type=float, default=0.5)
    parser.add_argument("--rates", default="0.01,0.001", help="false-discovery rates")
    parser.add_argument("--min-repeat", default="3,2,5")
    parser.add_argument("--min-tables", type=int, default=20)
    parser.add_argument("--tables-each", type=int, default=200, help="scale mode")
    parser.add_argument("--window", type=int, default=100, help="scale mode")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.mode == "scale":
        scale_mode(args)
    else:
        detect_mode(args)


if __name__ == "__main__":
    main()
