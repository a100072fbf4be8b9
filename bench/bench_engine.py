"""Engine speed, side by side with OpenSpiel's oh_hell: deals and games per second, memory.

Run: .venv/bin/python bench/bench_engine.py [--seconds 10] [--rounds 7] [--pin]

One process, one thread (``--pin`` also pins it to one core). The contenders take turns in
every round (paired, interleaved rounds), so load on the machine weighs on all alike; each
figure is the median over rounds with its range, and each ratio the median of the per-round
ratios. Every contender plays uniformly random legal actions drawn from ``random.Random``:

- per deal: 4 players, 10 cards, one deal from the shuffle to the last trick: the engine
  (it shuffles from a seed) against pyspiel's ``oh_hell`` (``num_tricks_fixed=10``) driven
  three ways: its chance nodes sampled by a uniform pick from ``legal_actions()`` (the deal is
  uniform, so this is a fair deal and the way most users drive it), sampled by scanning the
  ``chance_outcomes()`` probabilities in Python (slow: it builds a list of pairs per card),
  and fed pre-shuffled decks as its chance actions (no shuffling or sampling at all: the most
  favourable to OpenSpiel, hence the headline);
- whole games: ``oh-hell`` with 4 players (19 deals), legal actions listed at every step and
  the replay recorded at the end;
- memory: a finished game and its replay dict, measured with tracemalloc.

OpenSpiel is not a project dependency; install it to compare:
.venv-uv/bin/uv pip install --python .venv/bin/python open-spiel.
Without it the comparison is skipped with a message saying so.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any, NamedTuple

from engine import Game, core, preset

DEAL_VARIANT = preset(
    "oh-hell", max_cards=10, order="constant", deals=1, max_players=5, first_dealer="random"
)
GAME_VARIANT = preset("oh-hell")
PLAYERS = 4
GAMES_TARGET = 1_000
MEMORY_LIMIT_KB = 100


class Rates(NamedTuple):
    """Calls per second of one contender, one figure per round."""

    per_round: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.per_round)

    def spread(self) -> str:
        return f"{min(self.per_round):,.0f}-{max(self.per_round):,.0f}"


def measure(
    contenders: dict[str, Callable[[int], object]], seconds: float, rounds: int
) -> dict[str, Rates]:
    """Calls per second of each contender in every round, the contenders taking turns.

    Time is the CPU time of this process (one thread, so one core). Within a round every
    contender runs for the same time, one after the other, so a ratio of two contenders in
    the same round compares them under the same load.
    """
    for run_one in contenders.values():
        for i in range(20):
            run_one(i)
    rates: dict[str, list[float]] = {name: [] for name in contenders}
    count = 0
    for _ in range(rounds):
        for name, run_one in contenders.items():
            done, start = 0, time.process_time()
            deadline = start + seconds / rounds
            while True:
                for _ in range(20):
                    run_one(count)
                    count += 1
                done += 20
                now = time.process_time()
                if now >= deadline:
                    break
            rates[name].append(done / (now - start))
    return {name: Rates(values) for name, values in rates.items()}


def paired_ratio(a: Rates, b: Rates) -> str:
    """Median and range of a/b over the rounds, each round's pair measured side by side."""
    ratios = [x / y for x, y in zip(a.per_round, b.per_round, strict=True)]
    return f"{statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f})"


def engine_deal(rng: random.Random) -> Callable[[int], object]:
    """One random-vs-random deal of the engine per call."""
    pick = rng.random

    def run(seed: int) -> object:
        game = Game(DEAL_VARIANT, PLAYERS, seed)
        while game.phase != "over":
            actions = game.legal_actions()
            game.apply(actions[int(pick() * len(actions))])
        return game

    return run


def core_deal(rng: random.Random) -> Callable[[int], object]:
    """One random deal of the compiled core per call, driven from Python as ``engine_deal``."""
    pick = rng.random

    def run(seed: int) -> object:
        game = core.new_game(DEAL_VARIANT, PLAYERS, seed, compiled=True)
        while game.phase != 2:
            if game.phase == 0:
                bids = game.legal_bids()
                game.bid(_nth_bit(bids, int(pick() * bids.bit_count())))
            else:
                cards = game.legal_mask()
                game.play(_nth_bit(cards, int(pick() * cards.bit_count())))
        return game

    return run


def _nth_bit(mask: int, n: int) -> int:
    """Index of the n-th lowest set bit of ``mask``."""
    for _ in range(n):
        mask &= mask - 1
    return (mask & -mask).bit_length() - 1


def core_playout(rng: random.Random) -> Callable[[int], object]:
    """One random deal of the compiled core per call, its actions chosen inside the core
    (``playout``, the way a search's rollouts use it)."""
    salt = rng.getrandbits(62)

    def run(seed: int) -> object:
        game = core.new_game(DEAL_VARIANT, PLAYERS, seed, compiled=True)
        game.playout(seed ^ salt)
        return game

    return run


def engine_game(rng: random.Random) -> Callable[[int], object]:
    """One random-vs-random game of oh-hell with its replay per call."""
    pick = rng.random

    def run(seed: int) -> object:
        game = Game(GAME_VARIANT, PLAYERS, seed)
        while game.phase != "over":
            actions = game.legal_actions()
            game.apply(actions[int(pick() * len(actions))])
        return game.replay()

    return run


def spiel_deal_legal(pyspiel: Any, rng: random.Random) -> Callable[[int], object]:
    """One pyspiel deal per call, each chance node a uniform pick from ``legal_actions()``."""
    game = pyspiel.load_game("oh_hell", {"players": PLAYERS, "num_tricks_fixed": 10})
    pick = rng.random

    def run(_: int) -> object:
        state = game.new_initial_state()
        while not state.is_terminal():
            actions = state.legal_actions()
            state.apply_action(actions[int(pick() * len(actions))])
        return state

    return run


def spiel_deal(pyspiel: Any, rng: random.Random) -> Callable[[int], object]:
    """One pyspiel deal per call, chance nodes sampled from ``chance_outcomes()``."""
    game = pyspiel.load_game("oh_hell", {"players": PLAYERS, "num_tricks_fixed": 10})
    pick = rng.random

    def run(_: int) -> object:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                r, total = pick(), 0.0
                outcomes = state.chance_outcomes()
                action = outcomes[-1][0]
                for outcome, probability in outcomes:
                    total += probability
                    if r < total:
                        action = outcome
                        break
                state.apply_action(action)
            else:
                actions = state.legal_actions()
                state.apply_action(actions[int(pick() * len(actions))])
        return state

    return run


def spiel_deal_preshuffled(pyspiel: Any, rng: random.Random) -> Callable[[int], object]:
    """One pyspiel deal per call, its chance actions taken from pre-shuffled decks."""
    game = pyspiel.load_game("oh_hell", {"players": PLAYERS, "num_tricks_fixed": 10})
    pick = rng.random
    scripts = []
    for _ in range(1000):
        deck = list(range(52))
        rng.shuffle(deck)
        # hand size (fixed), dealer, 40 cards dealt, the trump card turned
        scripts.append([10, rng.randrange(PLAYERS), *deck[: PLAYERS * 10 + 1]])

    def run(i: int) -> object:
        state = game.new_initial_state()
        for action in scripts[i % len(scripts)]:
            state.apply_action(action)
        while not state.is_terminal():
            actions = state.legal_actions()
            state.apply_action(actions[int(pick() * len(actions))])
        return state

    return run


def replay_memory_kb(seed: int = 1) -> float:
    """Memory held by a finished oh-hell game and its replay dict, in KB."""
    rng = random.Random(seed)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    game = Game(GAME_VARIANT, PLAYERS, seed)
    while not game.is_over:
        actions = game.legal_actions()
        game.apply(actions[rng.randrange(len(actions))])
    replay = game.replay()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del game, replay
    return held / 1024


def pin_to_one_core() -> str:
    """Keep the run on one core so figures compare across machines with more of them."""
    if hasattr(os, "sched_setaffinity"):
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return f"pinned to core {core}"
    return "not pinned (no sched_setaffinity here)"


CONTENDERS = {
    "legal": "pyspiel oh_hell, chance by legal_actions()",
    "preshuffled": "pyspiel oh_hell, pre-shuffled decks",
    "sampled": "pyspiel oh_hell, chance by chance_outcomes()",
}


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="time per contender, over all rounds"
    )
    parser.add_argument("--rounds", type=int, default=7, help="paired rounds")
    parser.add_argument("--pin", action="store_true", help="pin the process to one core")
    args = parser.parse_args()
    pinned = pin_to_one_core() if args.pin else "not pinned"
    print(
        f"Python {sys.version.split()[0]}, {pinned}, CPU time, {args.rounds} paired rounds: "
        "median (range over rounds)"
    )

    try:
        import pyspiel
    except ImportError:
        pyspiel = None
        print(
            "SKIPPED: the OpenSpiel comparison (pyspiel is not importable; "
            ".venv-uv/bin/uv pip install --python .venv/bin/python open-spiel)",
            file=sys.stderr,
        )

    contenders = {"deal": engine_deal(random.Random(1))}
    compiled = core.compiled_available()
    if compiled:
        contenders["core"] = core_deal(random.Random(6))
        contenders["playout"] = core_playout(random.Random(7))
    else:
        print("SKIPPED: the compiled core (engine/_core.pyx is not built here)", file=sys.stderr)
    if pyspiel is not None:
        contenders["legal"] = spiel_deal_legal(pyspiel, random.Random(2))
        contenders["preshuffled"] = spiel_deal_preshuffled(pyspiel, random.Random(3))
        contenders["sampled"] = spiel_deal(pyspiel, random.Random(5))
    contenders["games"] = engine_game(random.Random(4))
    rates = measure(contenders, args.seconds, args.rounds)
    rows = [("engine, one deal (4 players, 10 cards)", rates["deal"], "deals/s")]
    if compiled:
        rows.append(("compiled core, one deal, driven from Python", rates["core"], "deals/s"))
        rows.append(
            ("compiled core, one deal, playout inside the core", rates["playout"], "deals/s")
        )
    rows += [(label, rates[key], "deals/s") for key, label in CONTENDERS.items() if key in rates]
    rows.append(("engine, whole oh-hell game + replay", rates["games"], "games/s"))
    width = max(len(name) for name, _, _ in rows)
    for name, value, unit in rows:
        print(f"{name:<{width}}  {value.median:>10,.0f} {unit}  ({value.spread()})")
    memory = replay_memory_kb()
    print(f"{'engine, finished game + replay (tracemalloc)':<{width}}  {memory:>10.1f} KB")
    print()
    if pyspiel is None:
        print("SKIPPED: no OpenSpiel comparison (pyspiel is not importable).")
    else:
        deal = rates["deal"]
        print("engine deals / OpenSpiel deals, median of the per-round ratios:")
        print(
            f"  against pre-shuffled decks (headline, OpenSpiel's best): "
            f"{paired_ratio(deal, rates['preshuffled'])}"
        )
        print(
            f"  against chance by legal_actions():                       "
            f"{paired_ratio(deal, rates['legal'])}"
        )
        print(
            f"  against chance by chance_outcomes():                     "
            f"{paired_ratio(deal, rates['sampled'])}"
        )
    if compiled:
        print("compiled core deals / pure engine deals (target: at least 10x):")
        print(f"  driven from Python:     {paired_ratio(rates['core'], rates['deal'])}")
        print(f"  playout inside the core: {paired_ratio(rates['playout'], rates['deal'])}")
        if pyspiel is not None:
            print("compiled core deals / OpenSpiel pre-shuffled deals (target: at least 5x):")
            print(f"  driven from Python:     {paired_ratio(rates['core'], rates['preshuffled'])}")
            print(
                f"  playout inside the core: {paired_ratio(rates['playout'], rates['preshuffled'])}"
            )
    games = rates["games"].median
    print(
        f"whole games: {games:,.0f}/s against a target of {GAMES_TARGET:,}/s "
        f"({'met' if games >= GAMES_TARGET else 'NOT MET'})"
    )
    print(
        f"memory: {memory:.1f} KB against a limit of {MEMORY_LIMIT_KB} KB "
        f"({'met' if memory < MEMORY_LIMIT_KB else 'NOT MET'})"
    )


if __name__ == "__main__":
    main()
