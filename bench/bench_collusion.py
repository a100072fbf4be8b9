"""Collusion detection: how soon colluding pairs are flagged, and how often honest pairs are.

A field of honest graded bots (the heuristic with rising noise, as in
bench/bench_ratings_quality.py) and colluding pairs of three strengths (strong, mid, weak: both
bots of a pair the heuristic at one noise) play 4-seat tables of a preset, each table four bots
drawn at random from the field and one game dealt from a seed of its own. In each pair the
partner sees the beneficiary's hand whenever both sit at a table and plays to let it make its
bid, sacrificing its own (engine/players/colluding.py); otherwise it plays as the heuristic.

Each repetition (its own base seed) plays ``--tables`` tables; at every checkpoint the tables so
far are scanned by ``tournaments.collusion.detect`` (what the platform's scan runs) at each
false-discovery rate asked for. Reported per checkpoint and rate:

- the share of repetitions in which each colluding pair was flagged the right way round
  (beneficiary and partner as planted), and the median z of the pair;
- the false-positive rate per honest pair: flagged pairs of two honest bots over such pairs
  tested, median and range over repetitions (the anchor, from the same games);
- the same for mixed pairs (a colluder and an honest bot), which a pair's sacrifice touches;
- the share of honest pairs whose unadjusted p-value is below 0.05, which is 5% when the
  p-values are calibrated.

    nice -n 10 .venv/bin/python bench/bench_collusion.py --reps 4 --tables 2000 --jobs 2
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from engine.game import Game, Phase
from engine.players import HeuristicPlayer
from engine.players.colluding import HelpingPlayer
from engine.presets import preset
from engine.simulate import derive_seed
from tournaments.collusion import PairEvidence, detect
from tournaments.maths.intervals import Finish

TABLE = 4
HONEST = (0.0, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0)  # noise of each honest bot, strongest first
PAIR_NOISE = {"strong": 0.0, "mid": 0.3, "weak": 0.6}


@dataclass(frozen=True, slots=True)
class Seat:
    """One bot of the field: its label, noise, and the bot it helps (helpers only)."""

    label: str
    noise: float
    helps: int | None = None


def field() -> tuple[Seat, ...]:
    """The honest bots, then each pair's beneficiary followed by its partner."""
    seats = [Seat(f"honest-{noise}", noise) for noise in HONEST]
    for strength, noise in PAIR_NOISE.items():
        seats.append(Seat(f"{strength}-beneficiary", noise))
        seats.append(Seat(f"{strength}-partner", noise, helps=len(seats) - 1))
    return tuple(seats)


FIELD = field()
PAIRS = {
    FIELD[i].label.split("-")[0]: (s.helps, i) for i, s in enumerate(FIELD) if s.helps is not None
}
COLLUDERS = {bot for pair in PAIRS.values() for bot in pair}


def play_table(job: tuple[str, int, tuple[int, ...]]) -> Finish:
    """Play one table of field bots ``seats`` and return its finish (places by total)."""
    variant, seed, seats = job
    game = Game(preset(variant), len(seats), seed)
    players = [
        (HelpingPlayer if FIELD[b].helps is not None else HeuristicPlayer)(
            derive_seed(seed, s), noise=FIELD[b].noise
        )
        for s, b in enumerate(seats)
    ]
    while not game.is_over:
        seat = game.acting_seat
        player = players[seat]
        obs = game.observation(seat)
        if game.phase is Phase.BID:
            game.bid(player.bid(obs, game.legal_bids()), seat)
            continue
        helps = FIELD[seats[seat]].helps
        if isinstance(player, HelpingPlayer) and helps in seats:
            partner = seats.index(helps)
            hand = game.observation(partner)["hand"]
            game.play(player.play_for(obs, game.legal_cards(), partner, hand), seat)
        else:
            game.play(player.play(obs, game.legal_cards()), seat)
    return Finish(bots=seats, places=tuple(game.ranks()))


def schedule(rep: int, tables: int) -> list[tuple[int, tuple[int, ...]]]:
    """Each table's deal seed and its four bots, drawn from the field by the repetition's seed."""
    import random

    rng = random.Random(derive_seed(5000 + rep, 0))
    return [
        (derive_seed(5000 + rep, 1, t), tuple(rng.sample(range(len(FIELD)), TABLE)))
        for t in range(tables)
    ]


@dataclass(frozen=True, slots=True)
class Scan:
    """One scan's verdicts: per colluding pair whether flagged right, and its z; the honest and
    mixed pairs tested and flagged."""

    caught: dict[str, bool]
    z: dict[str, float]
    honest: tuple[int, int]
    mixed: tuple[int, int]
    honest_nominal: int  # honest pairs with an unadjusted p-value below 0.05


def judge(found: Sequence[PairEvidence]) -> Scan:
    """Sort a scan's pairs into planted, honest and mixed, and count what was flagged."""
    caught: dict[str, bool] = {}
    z: dict[str, float] = {}
    honest = [0, 0]
    mixed = [0, 0]
    nominal = 0
    by_pair = {frozenset((e.beneficiary, e.partner)): e for e in found}
    for strength, (beneficiary, partner) in PAIRS.items():
        assert beneficiary is not None
        e = by_pair.get(frozenset((beneficiary, partner)))
        right = e is not None and (e.beneficiary, e.partner) == (beneficiary, partner)
        caught[strength] = bool(e is not None and e.flagged and right)
        z[strength] = (e.z if right else -e.z) if e is not None else float("nan")
    planted = {frozenset(p) for p in PAIRS.values()}
    for key, e in by_pair.items():
        if key in planted:
            continue
        counts = honest if not key & COLLUDERS else mixed
        counts[0] += 1
        counts[1] += e.flagged
        nominal += counts is honest and e.p_value < 0.05
    return Scan(caught, z, (honest[0], honest[1]), (mixed[0], mixed[1]), nominal)


def _rate(counts: Sequence[tuple[int, int]]) -> str:
    rates = [flagged / tested for tested, flagged in counts if tested]
    pooled = sum(f for _, f in counts) / max(1, sum(t for t, _ in counts))
    if not rates:
        return "-"
    return (
        f"{100 * pooled:5.2f}% (median {100 * statistics.median(rates):.2f}%, "
        f"{100 * min(rates):.2f}-{100 * max(rates):.2f}%)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="oh-hell")
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--checkpoints", default="250,500,1000,2000")
    parser.add_argument("--rates", default="0.001,0.01,0.05", help="false-discovery rates")
    parser.add_argument("--min-tables", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    checkpoints = [int(c) for c in args.checkpoints.split(",") if int(c) <= args.tables]
    rates = [float(r) for r in args.rates.split(",")]
    print(f"field: {len(FIELD)} bots; honest noise {HONEST}; pairs {PAIR_NOISE}")
    print(
        f"{args.reps} repetitions of {args.tables} tables of {TABLE}; min tables together "
        f"{args.min_tables}"
    )
    scans: dict[tuple[int, float], list[Scan]] = {(c, r): [] for c in checkpoints for r in rates}
    together: dict[int, list[int]] = {c: [] for c in checkpoints}
    started = time.process_time()
    wall = time.monotonic()
    for rep in range(args.reps):
        jobs = [(args.variant, seed, seats) for seed, seats in schedule(rep, args.tables)]
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs) as pool:
                finishes = list(pool.map(play_table, jobs, chunksize=32))
        else:
            finishes = list(map(play_table, jobs))
        for c in checkpoints:
            units = [[f] for f in finishes[:c]]
            together[c].append(sum(1 for f in finishes[:c] if set(PAIRS["mid"]) <= set(f.bots)))
            for r in rates:
                scans[c, r].append(
                    judge(detect(units, min_tables=args.min_tables, false_discovery_rate=r))
                )
        print(f"  repetition {rep + 1} done, {time.monotonic() - wall:.0f} s", flush=True)
    cpu = time.process_time() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"CPU: this process {cpu:.0f} s (the scans, and the games with --jobs 1), games in "
        f"workers {children.ru_utime + children.ru_stime:.0f} s; wall "
        f"{time.monotonic() - wall:.0f} s\n"
    )
    header = "tables  together  FDR    " + "  ".join(f"{s:>13}" for s in PAIRS)
    print(header + "  honest pairs flagged                 mixed pairs flagged")
    for c in checkpoints:
        shared = statistics.median(together[c])
        for r in rates:
            rows = scans[c, r]
            cells = []
            for strength in PAIRS:
                hit = sum(s.caught[strength] for s in rows)
                zs = [s.z[strength] for s in rows if s.z[strength] == s.z[strength]]
                z = f"{statistics.median(zs):4.1f}" if zs else "  - "
                cells.append(f"{hit}/{len(rows)} z {z}")
            print(
                f"{c:6d}  {shared:8.0f}  {r:<6} "
                + "  ".join(f"{x:>13}" for x in cells)
                + f"  {_rate([s.honest for s in rows]):36} {_rate([s.mixed for s in rows])}"
            )
    print("\ncalibration: honest pairs with an unadjusted p-value below 0.05 (5% if calibrated)")
    for c in checkpoints:
        rows = scans[c, rates[0]]
        tested = sum(s.honest[0] for s in rows)
        below = sum(s.honest_nominal for s in rows)
        if tested:
            print(f"{c:6d} tables: {below} of {tested} ({100 * below / tested:.1f}%)")


if __name__ == "__main__":
    main()
