"""Ranking quality: how fast and how well TrueSkill orders bots of known strength.

Reference bots of graded strength (the heuristic with rising noise) play 4-seat tables of a
preset. Each repetition (its own base seed) schedules duplicate groups: round-robin tables,
each played in its 4 seat rotations. The same tables and rotations are played twice: with
one deal seed per group (duplicate) and with a fresh deal seed per match (random deals).
Four arms rate them with ``tournaments.maths.ratings.rate`` in fixture order, no database:

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

``--fields 16 32`` studies realistic fields instead: bots graded without noise (the search
player at 1 and 2 samples a decision, the heuristic, and rule variants of it), seated as a
whole field every round. Each repetition plays three pools of table-games once (random deals;
boards, one deal at every table of a round; rotations, a table replaying one deal in its 4
seatings) and rates them every way of ``FIELD_ARMS``: per-table live TrueSkill (default tau
and tau 0), OpenSkill's Plackett-Luce, a round's tables as one TrueSkill update, the batch fit
of ``tournaments.maths.intervals`` refitted every 16 table-games, boards as one update by seat
differences, rotations as one update by duplicate differences. Also measured: the seat-luck
correlation, the pairwise prediction error on held-out games, and how often the batch fit's
90% rank intervals hold the true rank (``tournaments.maths.intervals.bootstrap``). The true
order is the mean points of each bot over every game the run plays for the field.

    .venv/bin/python bench/bench_ratings_quality.py --reps 8 --matches 1600 --jobs 2 \\
        --json tournaments/dashboard/ratings-quality.json
    .venv/bin/python bench/bench_ratings_quality.py --no-quality --ties --tie-games 400
    nice -n 15 .venv/bin/python bench/bench_ratings_quality.py --fields 16 32 --reps 2 \\
        --orders 4 --jobs 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from enum import StrEnum
from itertools import combinations, pairwise
from pathlib import Path
from typing import NamedTuple, Protocol

import numpy as np
from openskill.models import PlackettLuce

from bench.support.processes import ROOT
from engine.cards import CARD_NAMES, mask_of
from engine.players import make_player
from engine.players.base import Player
from engine.players.heuristic import estimate_from_obs
from engine.players.policy import choose_bid, choose_card
from engine.players.view import read_view
from engine.presets import PRESETS, preset
from engine.scoring import shared_ranks
from engine.simulate import derive_seed, play_game
from tournaments.formats.common import Fixture
from tournaments.formats.duplicate import (
    DuplicateResult,
    duplicate,
    duplicate_differences,
)
from tournaments.formats.round_robin import round_robin
from tournaments.maths.intervals import (
    BotRank,
    Choice,
    Finish,
    bootstrap,
    choices,
    fit,
)
from tournaments.maths.ratings import RatingParams, conservative, rate

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


class RulePlayer:
    """The heuristic with a different rule and no noise: a bot that is weaker by construction.

    ``bid_offset`` is added to the heuristic's trick estimate before it bids (a bot that bids
    high or low); ``counts_cards`` False forgets the cards played, so it cannot tell which of
    its cards are masters; ``overtricks`` True keeps trying to win tricks after its bid is made.
    """

    name = "rules"

    def __init__(
        self,
        seed: int = 0,
        bid_offset: float = 0.0,
        counts_cards: bool = True,
        overtricks: bool = False,
    ) -> None:
        self.bid_offset = bid_offset
        self.counts_cards = counts_cards
        self.overtricks = overtricks

    def bid(self, obs: dict, legal: tuple[int, ...]) -> int:
        """The legal bid nearest the heuristic's estimate moved by the offset."""
        return choose_bid(estimate_from_obs(obs) + self.bid_offset, legal)

    def play(self, obs: dict, legal: tuple[str, ...]) -> str:
        """The heuristic's card, from what this bot remembers and wants."""
        if len(legal) == 1:
            return legal[0]
        view = read_view(obs)
        gone = view.gone if self.counts_cards else 0
        need = max(view.need, 1) if self.overtricks else view.need
        card = choose_card(
            view.hand, mask_of(legal), view.trick, view.trump, gone, need, view.players
        )
        return CARD_NAMES[card]


def build_player(name: str, seed: int, options: dict) -> Player:
    """A reference player of engine.players, or this bench's rule variant (``rules``)."""
    if name == RulePlayer.name:
        return RulePlayer(seed, **options)
    return make_player(name, seed, **options)


def _play(job: tuple[str, tuple[Bot, ...], int, tuple[int, ...]]) -> tuple[GameKey, Scores, float]:
    variant, bots, seed, seats = job
    started = time.process_time()
    players = [build_player(bots[b][1], derive_seed(seed, b), bots[b][2]) for b in seats]
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
class Update:
    """One change of the board: ``matches`` games played, and the finishes it rates at once.

    A finish may span several tables (one update of every bot of a round); the batch fit's
    update carries one finish per table and refits the whole history.
    """

    matches: int
    finishes: tuple[Finish, ...]


def _finish(bots: Sequence[int], values: Sequence[float]) -> Finish:
    """The bots ranked by their values, highest first; equal values share a place."""
    return Finish(tuple(bots), tuple(shared_ranks(list(values))))


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


def _rounds(fixtures: Sequence[Fixture]) -> list[list[Fixture]]:
    rounds: dict[int, list[Fixture]] = {}
    for f in fixtures:
        rounds.setdefault(f.round, []).append(f)
    return list(rounds.values())


def _totals(f: Fixture, games: dict[GameKey, Scores]) -> list[int]:
    return [sum(deals) for deals in games[(f.seed, f.seats)]]


def per_match_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Update]:
    """Rate each match on its own: ranks by final points."""
    return [Update(1, (_finish(f.seats, _totals(f, games)),)) for f in fixtures]


def summed_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Update]:
    """Rate each group's matches as one update: ranks by each bot's points summed over them."""
    steps = []
    for members in _groups(fixtures):
        points: dict[int, int] = {}
        for f in members:
            for bot, total in zip(f.seats, _totals(f, games), strict=True):
                points[bot] = points.get(bot, 0) + total
        seats = members[0].seats
        steps.append(Update(len(members), (_finish(seats, [points[b] for b in seats]),)))
    return steps


def _differences(members: Sequence[Fixture], games: dict[GameKey, Scores]) -> Finish:
    """The bots of fixtures sharing one deal, ranked by their duplicate differences."""
    results = [DuplicateResult("", f.seats, games[(f.seed, f.seats)]) for f in members]
    diffs = duplicate_differences(results)
    bots = sorted(diffs)
    # Sums of means carry float noise; round so an exact tie stays a tie.
    return _finish(bots, [round(diffs[b], 6) for b in bots])


def group_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Update]:
    """Rate each duplicate group as one update: ranks by the group's duplicate differences."""
    return [Update(len(m), (_differences(m, games),)) for m in _groups(fixtures)]


def concurrent_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Update]:
    """Rate each round's tables as one update of all its bots, ranked by final points."""
    steps = []
    for tables in _rounds(fixtures):
        bots = [b for f in tables for b in f.seats]
        points = [p for f in tables for p in _totals(f, games)]
        steps.append(Update(len(tables), (_finish(bots, points),)))
    return steps


# The smaller ladder round measured beside the whole round (the ladders' default, ROUND_TABLES).
BLOCK_TABLES = 4


def block_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Update]:
    """Rate a round's tables in blocks of ``BLOCK_TABLES`` consecutive tables, each block one
    update of its bots ranked by final points (a 16-bot round is one block)."""
    steps = []
    for tables in _rounds(fixtures):
        for start in range(0, len(tables), BLOCK_TABLES):
            steps += concurrent_steps(tables[start : start + BLOCK_TABLES], games)
    return steps


# The batch fit refits once this many table-games have ended (whole rounds): the platform
# refits on a timer, not after every match, and a fit of 1,600 games costs far more than an
# update (bench/README.md, "Realistic fields").
REFIT_EVERY = 16


def batch_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Update]:
    """Whole rounds gathered into updates of at least ``REFIT_EVERY`` table-games, one finish
    per table: the batch fit refits after each."""
    steps: list[Update] = []
    pending: list[Finish] = []
    for tables in _rounds(fixtures):
        pending.extend(_finish(f.seats, _totals(f, games)) for f in tables)
        if len(pending) >= REFIT_EVERY:
            steps.append(Update(len(pending), tuple(pending)))
            pending = []
    if pending:
        steps.append(Update(len(pending), tuple(pending)))
    return steps


def board_steps(fixtures: Sequence[Fixture], games: dict[GameKey, Scores]) -> list[Update]:
    """Rate each board (one deal at every table of a round) as one update of all its bots,
    ranked by each bot's points less the mean of the same seat and deal at every table."""
    return [Update(len(tables), (_differences(tables, games),)) for tables in _rounds(fixtures)]


class Rater(Protocol):
    """A rating method: takes updates, shows a board (the order) and point estimates."""

    def apply(self, update: Update) -> None:
        """Rate the update's finishes."""
        ...

    def board(self) -> list[float]:
        """What the leaderboard orders by, one value per bot."""
        ...

    def means(self) -> list[float]:
        """The estimate of each bot's strength that predictions use."""
        ...


class TrueSkillRater:
    """``tournaments.maths.ratings.rate`` finish by finish; the board is ``mu - 3 sigma``."""

    def __init__(self, n: int, params: RatingParams) -> None:
        self.params = params
        self.ratings = [(params.mu, params.sigma)] * n

    def apply(self, update: Update) -> None:
        """One TrueSkill update per finish."""
        for finish in update.finishes:
            after = rate(self.params, [self.ratings[b] for b in finish.bots], finish.places)
            for b, value in zip(finish.bots, after, strict=True):
                self.ratings[b] = value

    def board(self) -> list[float]:
        """The conservative rating the leaderboard shows."""
        return [conservative(mu, sigma) for mu, sigma in self.ratings]

    def means(self) -> list[float]:
        """The means."""
        return [mu for mu, _ in self.ratings]


class OpenSkillRater:
    """OpenSkill's Plackett-Luce model (default parameters), finish by finish."""

    def __init__(self, n: int) -> None:
        self.model = PlackettLuce()
        self.ratings = [self.model.rating() for _ in range(n)]

    def apply(self, update: Update) -> None:
        """One OpenSkill update per finish, each bot a team of one."""
        for finish in update.finishes:
            teams = [[self.ratings[b]] for b in finish.bots]
            after = self.model.rate(teams, ranks=list(finish.places))
            for b, (rating,) in zip(finish.bots, after, strict=True):
                self.ratings[b] = rating

    def board(self) -> list[float]:
        """``mu - 3 sigma``, as the TrueSkill board."""
        return [r.mu - 3 * r.sigma for r in self.ratings]

    def means(self) -> list[float]:
        """The means."""
        return [r.mu for r in self.ratings]


class BatchRater:
    """``tournaments.maths.intervals.fit`` of every finish so far, refitted after each update
    from the previous strengths."""

    def __init__(self, n: int) -> None:
        self.index = {b: b for b in range(n)}
        self.data: list[Choice] = []
        self.strengths = fit([], n)

    def apply(self, update: Update) -> None:
        """Add the update's finishes to the history and refit."""
        for finish in update.finishes:
            self.data.extend(choices(finish, self.index))
        self.strengths = fit(self.data, len(self.index), initial=self.strengths)

    def board(self) -> list[float]:
        """The fitted log-strengths (the batch ranks order by them)."""
        return self.strengths.tolist()

    def means(self) -> list[float]:
        """The same log-strengths."""
        return self.strengths.tolist()


class Arm(NamedTuple):
    """One way of rating: which games, and how they become updates."""

    games: str  # "random" or "duplicate": a field of Plan
    build: Callable[[Sequence[Fixture], dict[GameKey, Scores]], list[Update]]


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
    means_at: dict[int, list[float]]  # checkpoint -> the rater's strength estimates


def order_counts(values: Sequence[float]) -> tuple[int, int]:
    """Pairs in the true order (index 0 strongest) and pairs inverted; ties count as neither."""
    right = wrong = 0
    for i, j in combinations(range(len(values)), 2):
        right += values[i] > values[j]
        wrong += values[i] < values[j]
    return right, wrong


def kendall(board: Sequence[float], order: Sequence[int]) -> tuple[float, int]:
    """Kendall's tau (tau-a: ties count as neither) of a board against the true order
    (``order`` lists the bots strongest first), and the number of inverted pairs."""
    right, wrong = order_counts([board[b] for b in order])
    pairs = len(order) * (len(order) - 1) // 2
    return (right - wrong) / pairs, wrong


def measure(updates: Sequence[Update], rater: Rater, horizon: int, order: Sequence[int]) -> Quality:
    """Apply the updates in order, reading the board after every one."""
    tau, inverted, played = 0.0, 0, 0
    tau_at: dict[int, float] = {}
    inverted_at: dict[int, int] = {}
    means_at: dict[int, list[float]] = {}
    good = 0
    first: int | None = None
    marks = [c for c in CHECKPOINTS if c <= horizon]
    for update in updates:
        # The board before this update held for the matches of this update.
        while marks and marks[0] <= played:
            tau_at[marks[0]], inverted_at[marks[0]] = tau, inverted
            means_at[marks[0]] = rater.means()
            marks.pop(0)
        rater.apply(update)
        good += update.matches if tau >= THRESHOLD else 0
        played += update.matches
        tau, inverted = kendall(rater.board(), order)
        if first is None and tau >= THRESHOLD:
            first = played
        if played >= horizon:
            break
    for mark in marks:
        tau_at[mark], inverted_at[mark] = tau, inverted
        means_at[mark] = rater.means()
    return Quality(tau_at, inverted_at, good / played, first, means_at)


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
                measure(
                    arm.build(getattr(plan, arm.games), cache.games),
                    TrueSkillRater(n, params),
                    args.matches,
                    range(n),
                )
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


# --- realistic fields: graded by rules and budgets, rated every way -----------------------


def _rules(label: str, **options: float | bool) -> Bot:
    return (label, RulePlayer.name, dict(options))


_SEARCH = tuple((f"search-{k}", "search", {"samples": k}) for k in (2, 1))
# No bot here plays at random: strength differs by search budget (samples per decision) or by
# a rule (bidding high or low, forgetting the cards played, chasing overtricks). The true order
# is measured, not assumed: mean points over every game the run plays for the field.
FIELDS: dict[str, tuple[Bot, ...]] = {
    "16": (
        *_SEARCH,
        ("heuristic", "heuristic", {}),
        _rules("bid-0.25", bid_offset=-0.25),
        _rules("bid-0.5", bid_offset=-0.5),
        _rules("bid-1", bid_offset=-1.0),
        _rules("bid-1.5", bid_offset=-1.5),
        _rules("bid+0.25", bid_offset=0.25),
        _rules("bid+0.5", bid_offset=0.5),
        _rules("bid+0.75", bid_offset=0.75),
        _rules("bid+1.5", bid_offset=1.5),
        _rules("forget-0.5", bid_offset=-0.5, counts_cards=False),
        _rules("forget+1", bid_offset=1.0, counts_cards=False),
        _rules("over", overtricks=True),
        _rules("over-0.5", bid_offset=-0.5, overtricks=True),
        _rules("over-1", bid_offset=-1.0, overtricks=True),
    ),
}
FIELDS["32"] = (
    *FIELDS["16"],
    ("search-1-heuristic-bids", "search", {"samples": 1, "bid_spread": 0}),
    _rules("bid-0.75", bid_offset=-0.75),
    _rules("bid+1", bid_offset=1.0),
    _rules("bid+0.35", bid_offset=0.35),
    _rules("forget", counts_cards=False),
    _rules("forget-0.25", bid_offset=-0.25, counts_cards=False),
    _rules("forget-0.75", bid_offset=-0.75, counts_cards=False),
    _rules("forget-1", bid_offset=-1.0, counts_cards=False),
    _rules("forget-1.5", bid_offset=-1.5, counts_cards=False),
    _rules("forget+0.25", bid_offset=0.25, counts_cards=False),
    _rules("forget+0.5", bid_offset=0.5, counts_cards=False),
    _rules("over-0.25", bid_offset=-0.25, overtricks=True),
    _rules("over-1.5", bid_offset=-1.5, overtricks=True),
    _rules("over+0.5", bid_offset=0.5, overtricks=True),
    _rules("forget-over", counts_cards=False, overtricks=True),
    _rules("forget-over-0.5", bid_offset=-0.5, counts_cards=False, overtricks=True),
)


class Pool(StrEnum):
    """How the games of a field are dealt; each pool is played once and rated many ways."""

    RANDOM = "random"  # every table its own deal, as the ladder deals
    BOARDS = "boards"  # one deal at every table of a round, different bots at each
    ROTATIONS = "rotations"  # each table replays one deal in its 4 seat rotations
    HELD_OUT = "held-out"  # random deals never rated: the games predictions are scored on


HELD_OUT_REP = 10_000  # the held-out pool's base seed, apart from every repetition's


def field_fixtures(n: int, pool: Pool, rep: int, matches: int) -> list[Fixture]:
    """The ``matches`` table-games of one repetition and pool, round by round.

    A round seats the whole field at ``n / 4`` tables (tournaments.formats.round_robin, so
    every bot plays every round and meets everyone about equally); rotations use the duplicate
    format's groups (a round-robin table replayed in its 4 rotations on one deal).
    """
    base = derive_seed(20_000 + rep, list(Pool).index(pool))
    if pool is Pool.ROTATIONS:
        return duplicate(list(range(n)), TABLE, math.ceil(matches / n), base)[:matches]
    fixtures = round_robin(list(range(n)), TABLE, math.ceil(matches * TABLE / n), base)
    fixtures = fixtures[:matches]
    if pool is Pool.BOARDS:
        return [
            replace(f, seed=derive_seed(base, f.round), duplicate_group=f"board {f.round}")
            for f in fixtures
        ]
    return fixtures


class FieldArm(NamedTuple):
    """One way of rating a field: which pool of games, how they become updates, which rater."""

    pool: Pool
    build: Callable[[Sequence[Fixture], dict[GameKey, Scores]], list[Update]]
    rater: Callable[[int], Rater]


PER_TABLE = "per-table live updates (TrueSkill)"
BLOCKS = f"blocks of {BLOCK_TABLES} tables as one update (TrueSkill)"
FIELD_ARMS: dict[str, FieldArm] = {
    PER_TABLE: FieldArm(Pool.RANDOM, per_match_steps, lambda n: TrueSkillRater(n, BASE)),
    "per-table live, TrueSkill tau 0": FieldArm(
        Pool.RANDOM, per_match_steps, lambda n: TrueSkillRater(n, replace(BASE, tau=0.0))
    ),
    "per-table live, OpenSkill Plackett-Luce": FieldArm(
        Pool.RANDOM, per_match_steps, OpenSkillRater
    ),
    "concurrent tables as one update (TrueSkill)": FieldArm(
        Pool.RANDOM, concurrent_steps, lambda n: TrueSkillRater(n, BASE)
    ),
    BLOCKS: FieldArm(Pool.RANDOM, block_steps, lambda n: TrueSkillRater(n, BASE)),
    "batch fit (intervals.fit), refitted every 16 table-games": FieldArm(
        Pool.RANDOM, batch_steps, BatchRater
    ),
    "boards across tables, one update (TrueSkill)": FieldArm(
        Pool.BOARDS, board_steps, lambda n: TrueSkillRater(n, BASE)
    ),
    "rotations of one deal, group as one update (TrueSkill)": FieldArm(
        Pool.ROTATIONS, group_steps, lambda n: TrueSkillRater(n, BASE)
    ),
}
COVERAGE_AT = (200, 800, 1600)  # checkpoints at which the rank intervals are bootstrapped


@dataclass(frozen=True, slots=True)
class Truth:
    """The field's true strength: mean points per bot over every game the run played."""

    means: list[float]
    halfwidths: list[float]  # 95% interval of each mean
    order: list[int]  # bots strongest first
    ranks: list[int]  # each bot's true rank, 1 strongest


def truth(n: int, tables: Iterable[tuple[tuple[int, ...], Sequence[int]]]) -> Truth:
    """Mean final points of each bot over ``tables`` (seats and their totals)."""
    points: list[list[int]] = [[] for _ in range(n)]
    for seats, totals in tables:
        for bot, total in zip(seats, totals, strict=True):
            points[bot].append(total)
    means = [statistics.mean(p) for p in points]
    halves = [1.96 * statistics.stdev(p) / math.sqrt(len(p)) for p in points]
    order = sorted(range(n), key=lambda b: -means[b])
    ranks = [0] * n
    for place, bot in enumerate(order, start=1):
        ranks[bot] = place
    return Truth(means, halves, order, ranks)


def seat_luck_correlation(boards: Sequence[Sequence[Sequence[float]]]) -> float:
    """How much of a seat's result is the deal: the correlation between the residuals (points
    less the bot's mean) of the same seat at two tables of one board, ``boards[b][t][s]``."""
    values = [v for board in boards for table in board for v in table]
    centre = statistics.mean(values)
    spread = statistics.pvariance(values, centre)
    products: list[float] = []
    for board in boards:
        for first, second in combinations(board, 2):
            products.extend((x - centre) * (y - centre) for x, y in zip(first, second, strict=True))
    return statistics.mean(products) / spread


def pairwise_error(scores: Sequence[float], finishes: Iterable[Finish]) -> float:
    """Share of the bot pairs at held-out tables that ``scores`` order wrongly: the higher
    score predicted to finish above; level finishes are skipped, level scores count half."""
    wrong = 0.0
    pairs = 0
    for finish in finishes:
        for (a, pa), (b, pb) in combinations(zip(finish.bots, finish.places, strict=True), 2):
            if pa == pb:
                continue
            pairs += 1
            first, second = (a, b) if pa < pb else (b, a)
            if scores[first] < scores[second]:
                wrong += 1
            elif scores[first] == scores[second]:
                wrong += 0.5
    return wrong / pairs


def coverage(ranks: Iterable[BotRank], true_ranks: Sequence[int]) -> tuple[int, int]:
    """How many bots' true rank lies inside their interval, and of how many bots."""
    inside = total = 0
    for r in ranks:
        inside += r.low <= true_ranks[r.bot] <= r.high
        total += 1
    return inside, total


@dataclass(frozen=True, slots=True)
class RepResult:
    """Everything measured in one repetition of one field."""

    quality: dict[str, Quality]  # arm -> its run
    errors: dict[str, dict[int, float]]  # arm -> checkpoint -> held-out pairwise error
    covered: dict[int, tuple[int, int]]  # checkpoint -> (true rank inside, bots)
    widths: dict[int, float]  # checkpoint -> mean interval width (ranks)


def rate_field_rep(
    n: int,
    fixtures: dict[Pool, list[Fixture]],
    games: dict[GameKey, Scores],
    the_truth: Truth,
    held_out: Sequence[Finish],
    horizon: int,
    resamples: int,
    seed: int,
) -> RepResult:
    """Rate one repetition every way, score predictions, bootstrap the rank intervals."""
    quality: dict[str, Quality] = {}
    errors: dict[str, dict[int, float]] = {}
    for name, arm in FIELD_ARMS.items():
        run = measure(arm.build(fixtures[arm.pool], games), arm.rater(n), horizon, the_truth.order)
        quality[name] = run
        errors[name] = {c: pairwise_error(m, held_out) for c, m in run.means_at.items()}
    finishes = [u.finishes[0] for u in per_match_steps(fixtures[Pool.RANDOM], games)]
    covered: dict[int, tuple[int, int]] = {}
    widths: dict[int, float] = {}
    for mark in (c for c in COVERAGE_AT if c <= horizon and resamples):
        rng = np.random.default_rng(derive_seed(seed, mark))
        fitted = bootstrap([[f] for f in finishes[:mark]], resamples=resamples, rng=rng)
        covered[mark] = coverage(fitted.ranks, the_truth.ranks)
        widths[mark] = statistics.mean(r.high - r.low + 1 for r in fitted.ranks)
    return RepResult(quality, errors, covered, widths)


def _rate_job(job: tuple) -> RepResult:
    return rate_field_rep(*job)


def shuffled_rounds(fixtures: Sequence[Fixture], rng: random.Random) -> list[Fixture]:
    """The same fixtures with their rounds in another order (each round kept whole)."""
    rounds = _rounds(fixtures)
    rng.shuffle(rounds)
    return [f for r in rounds for f in r]


def field_study(args: argparse.Namespace, name: str) -> None:
    """Play (or read) every pool of one field, rate each repetition every way, print tables."""
    bots = FIELDS[name]
    n = len(bots)
    cache = GameCache(args.variant, bots)
    plans = [
        {
            pool: field_fixtures(n, pool, rep, args.matches)
            for pool in Pool
            if pool is not Pool.HELD_OUT
        }
        for rep in range(args.reps)
    ]
    held = field_fixtures(n, Pool.HELD_OUT, HELD_OUT_REP, args.held_out)
    keys = [(f.seed, f.seats) for f in held]
    keys += [(f.seed, f.seats) for plan in plans for fixtures in plan.values() for f in fixtures]
    started = time.perf_counter()
    played, cpu = cache.fill(keys, args.jobs)
    print(
        f"\n## Field of {n}\n\n{len(set(keys))} games needed, {played} played now ({cpu:.0f} s "
        f"CPU, {time.perf_counter() - started:.0f} s wall, {args.jobs} process(es)), rest cached"
    )
    every = [(f.seats, _totals(f, cache.games)) for f in held]
    every += [(f.seats, _totals(f, cache.games)) for p in plans for fs in p.values() for f in fs]
    the_truth = truth(n, every)
    _print_truth(bots, the_truth, len(every))
    boards = [
        [
            [t - the_truth.means[b] for b, t in zip(f.seats, _totals(f, cache.games), strict=True)]
            for f in tables
        ]
        for plan in plans
        for tables in _rounds(plan[Pool.BOARDS])
    ]
    _print_seat_luck(boards, args.reps)
    held_out = [u.finishes[0] for u in per_match_steps(held, cache.games)]
    # Each repetition's games are also rated with their rounds in other orders (the first
    # order is the schedule's): more runs of the same games, which spread the share of time
    # by order; the rank intervals are bootstrapped in the schedule's order only.
    jobs = [
        (
            n,
            {
                pool: fs if k == 0 else shuffled_rounds(fs, random.Random(derive_seed(rep, k)))
                for pool, fs in plan.items()
            },
            {(f.seed, f.seats): cache.games[(f.seed, f.seats)] for fs in plan.values() for f in fs},
            the_truth,
            held_out,
            args.matches,
            args.resamples if k == 0 else 0,
            derive_seed(30_000, rep),
        )
        for rep, plan in enumerate(plans)
        for k in range(args.orders)
    ]
    started = time.perf_counter()
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_rate_job, jobs))
    else:
        results = list(map(_rate_job, jobs))
    print(
        f"\nrating: {time.perf_counter() - started:.0f} s wall, {args.reps} repetitions x "
        f"{args.orders} orders = {len(results)} runs"
    )
    floor = pairwise_error(the_truth.means, held_out)
    _print_field(args, n, results, floor)


def _print_truth(bots: tuple[Bot, ...], the_truth: Truth, games: int) -> None:
    print(f"\nTrue order: mean points over all {games} games of the field (95% interval).\n")
    print("| rank | bot | mean points |\n|---|---|---|")
    for place, b in enumerate(the_truth.order, start=1):
        print(
            f"| {place} | {bots[b][0]} | {the_truth.means[b]:.1f} ± {the_truth.halfwidths[b]:.1f} |"
        )
    gaps = [the_truth.means[a] - the_truth.means[b] for a, b in pairwise(the_truth.order)]
    apart = sum(
        the_truth.means[a] - the_truth.halfwidths[a] > the_truth.means[b] + the_truth.halfwidths[b]
        for a, b in pairwise(the_truth.order)
    )
    print(
        f"\nneighbours {min(gaps):.1f} to {max(gaps):.1f} points apart (median "
        f"{statistics.median(gaps):.1f}); {apart} of {len(gaps)} neighbour pairs have "
        "disjoint intervals"
    )


def _print_seat_luck(boards: list[list[list[float]]], reps: int) -> None:
    rng = random.Random(1)
    point = seat_luck_correlation(boards)
    draws = sorted(
        seat_luck_correlation([boards[rng.randrange(len(boards))] for _ in boards])
        for _ in range(200)
    )
    print(
        f"\nseat-luck correlation (same seat and deal, different bots, game points less the bot's "
        f"mean): {point:.3f} (95% bootstrap over boards {draws[4]:.3f}-{draws[194]:.3f}; "
        f"{len(boards)} boards of {len(boards[0])} tables, {reps} repetitions)"
    )


def _print_field(args: argparse.Namespace, n: int, results: list[RepResult], floor: float) -> None:
    marks = [c for c in CHECKPOINTS if c <= args.matches]
    head = " | ".join(str(c) for c in marks)
    reps = len(results)
    pairs = n * (n - 1) // 2
    print(
        f"\nKendall tau after so many table-games; median (quartiles) over {reps} runs "
        f"({args.reps} repetitions x {args.orders} orders):\n"
    )
    print(f"| arm | {head} |\n|---|" + "---|" * len(marks))
    for arm in FIELD_ARMS:
        runs = [r.quality[arm] for r in results]
        cells = [_spread(quartiles([q.tau_at[c] for q in runs]), 2) for c in marks]
        print(f"| {arm} | " + " | ".join(cells) + " |")
    print(
        f"\nShare of the {args.matches} table-games at tau >= {THRESHOLD} (at most "
        f"{math.floor(pairs * (1 - THRESHOLD) / 2)} of {pairs} pairs inverted), the paired "
        f"difference from per-table live updates (same games), and the first table-game there "
        f"(censored: '>{args.matches}' = not reached):\n"
    )
    print("| arm | share | minus per-table | arm ahead | first table-game | never reached |")
    print("|---|---|---|---|---|---|")
    base = [r.quality[PER_TABLE].share_good for r in results]
    for arm in FIELD_ARMS:
        runs = [r.quality[arm] for r in results]
        shares = [q.share_good for q in runs]
        diffs = [a - b for a, b in zip(shares, base, strict=True)]
        firsts = [math.inf if q.first_good is None else float(q.first_good) for q in runs]
        censored = sum(q.first_good is None for q in runs)
        ahead = sum(d > 0 for d in diffs)
        print(
            f"| {arm} | {_spread(quartiles(shares), 2)} | {_spread(quartiles(diffs), 2)} "
            f"| {ahead}/{reps} | {_spread(quartiles(firsts), 0, args.matches)} "
            f"| {censored}/{reps} |"
        )
    print(
        f"\nPairwise prediction error on {args.held_out} held-out random-deal table-games "
        f"(share of seat pairs ordered wrongly); the true means order them with {floor:.3f}:\n"
    )
    print(f"| arm | {head} |\n|---|" + "---|" * len(marks))
    for arm in FIELD_ARMS:
        cells = [_spread(quartiles([r.errors[arm][c] for r in results]), 3) for c in marks]
        print(f"| {arm} | " + " | ".join(cells) + " |")
    print(
        f"\nCoverage of the batch fit's 90% rank intervals ({args.resamples} bootstrap resamples "
        f"of the table-games so far): share of bots whose true rank lies inside, over all bots "
        f"and repetitions (quartiles over repetitions), and the mean interval width in ranks:\n"
    )
    print("| table-games | coverage | per repetition | mean width |\n|---|---|---|---|")
    bootstrapped = [r for r in results if r.covered]
    for mark in (c for c in COVERAGE_AT if c <= args.matches and bootstrapped):
        inside = sum(r.covered[mark][0] for r in bootstrapped)
        total = sum(r.covered[mark][1] for r in bootstrapped)
        per = quartiles([r.covered[mark][0] / r.covered[mark][1] for r in bootstrapped])
        width = statistics.mean(r.widths[mark] for r in bootstrapped)
        share = f"{inside / total:.3f} ({inside}/{total})"
        print(f"| {mark} | {share} | {_spread(per, 2)} | {width:.1f} |")


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
    parser.add_argument(
        "--fields", nargs="+", choices=FIELDS, help="rate these fields instead of a ladder"
    )
    parser.add_argument("--held-out", type=int, default=800, help="held-out table-games a field")
    parser.add_argument("--resamples", type=int, default=100, help="bootstrap resamples")
    parser.add_argument("--orders", type=int, default=1, help="orders of a repetition's rounds")
    args = parser.parse_args()
    if args.fields:
        print(f"{args.variant}, {TABLE} seats, fields {args.fields}, {args.reps} repetitions")
        for name in args.fields:
            field_study(args, name)
        return
    bots = LADDERS[args.ladder]
    print(f"{args.variant}, {TABLE} seats, bots strongest first: {[b[0] for b in bots]}")
    if not args.no_quality:
        quality(args, GameCache(args.variant, bots))
    if args.ties:
        ties(args)


if __name__ == "__main__":
    main()
