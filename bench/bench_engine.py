"""Engine speed, side by side with OpenSpiel's oh_hell: deals and games per second, memory.

Run: .venv/bin/python bench/bench_engine.py [--seconds 3]

One process, one thread (``--pin`` also pins it to one core); the contenders take turns, so
other load on the machine weighs on all alike. Every contender plays uniformly random legal
actions drawn from the same kind of ``random.Random``:

- per deal: 4 players, 10 cards, one deal from the shuffle to the last trick; the engine
  against pyspiel's ``oh_hell`` (``num_tricks_fixed=10``) with its chance nodes sampled through
  ``chance_outcomes()``, and pyspiel fed pre-shuffled decks as its chance actions;
- whole games: ``oh-hell`` with 4 players (19 deals), legal actions listed at every step and
  the replay recorded at the end;
- memory: a finished game and its replay dict, measured with tracemalloc.

pyspiel is not a project dependency; install it to compare: .venv/bin/pip install open-spiel
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import Game, preset

DEAL_VARIANT = preset(
    "oh-hell", max_cards=10, order="constant", deals=1, max_players=5, first_dealer="random"
)
GAME_VARIANT = preset("oh-hell")
PLAYERS = 4
DEAL_TARGET_FACTOR = 2.0
GAMES_TARGET = 1_000
MEMORY_LIMIT_KB = 100


def measure(
    contenders: dict[str, Callable[[int], object]], seconds: float, rounds: int = 5
) -> dict[str, float]:
    """Best calls per second of each contender, taking turns round after round.

    Time is the CPU time of this process (one thread, so one core): other load on the machine
    does not count. Taking turns spreads what load still shows (shared caches) over all
    contenders alike, and the best round (as timeit does) is the one least disturbed by it.
    """
    for run_one in contenders.values():
        for i in range(20):
            run_one(i)
    best = dict.fromkeys(contenders, 0.0)
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
            best[name] = max(best[name], done / (now - start))
    return best


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


def spiel_deal(pyspiel: object, rng: random.Random) -> Callable[[int], object]:
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


def spiel_deal_preshuffled(pyspiel: object, rng: random.Random) -> Callable[[int], object]:
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


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="time per contender, over 5 rounds"
    )
    parser.add_argument("--pin", action="store_true", help="pin the process to one core")
    args = parser.parse_args()
    pinned = pin_to_one_core() if args.pin else "not pinned"
    print(f"Python {sys.version.split()[0]}, {pinned}, CPU time, best of 5 rounds")

    try:
        import pyspiel
    except ImportError:
        pyspiel = None

    contenders = {"deal": engine_deal(random.Random(1))}
    if pyspiel is not None:
        contenders["sampled"] = spiel_deal(pyspiel, random.Random(2))
        contenders["preshuffled"] = spiel_deal_preshuffled(pyspiel, random.Random(3))
    contenders["games"] = engine_game(random.Random(4))
    best = measure(contenders, args.seconds)
    deal, games = best["deal"], best["games"]
    rows = [("engine, one deal (4 players, 10 cards)", deal, "deals/s")]
    if pyspiel is not None:
        sampled, preshuffled = best["sampled"], best["preshuffled"]
        rows.append(("pyspiel oh_hell, chance_outcomes()", sampled, "deals/s"))
        rows.append(("pyspiel oh_hell, pre-shuffled decks", preshuffled, "deals/s"))
    rows.append(("engine, whole oh-hell game + replay", games, "games/s"))
    memory = replay_memory_kb()
    rows.append(("engine, finished game + replay (tracemalloc)", memory, "KB"))

    width = max(len(name) for name, _, _ in rows)
    for name, value, unit in rows:
        print(f"{name:<{width}}  {value:>10,.0f} {unit}")
    print()
    if pyspiel is None:
        print("pyspiel is not importable: no comparison (.venv/bin/pip install open-spiel).")
    else:
        ratio = deal / sampled
        verdict = (
            "target met"
            if ratio >= DEAL_TARGET_FACTOR
            else ("floor met" if ratio >= 1 else "BELOW FLOOR")
        )
        print(
            f"engine / pyspiel (chance_outcomes): {ratio:.2f}x  ({verdict}; floor 1x, "
            f"target {DEAL_TARGET_FACTOR:g}x)"
        )
        print(f"engine / pyspiel (pre-shuffled):    {deal / preshuffled:.2f}x")
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
