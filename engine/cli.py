"""The ``ohhell`` command line: presets, options, rules, simulations, replays.

Bad input is an argparse error (exit 2) that names the problem, never a traceback.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from engine.errors import EngineError, InvalidReplayError, InvalidVariantError
from engine.players import PLAYER_NOTES, PLAYERS, make_player
from engine.presets import PRESET_NOTES, PRESETS, preset
from engine.replay import verify_replay
from engine.selfplay import iter_games, load_player
from engine.simulate import derive_seed, play_game, simulate
from engine.variant import OPTIONS, Variant


class CliError(Exception):
    """Bad input found after parsing; reported through the subcommand's parser."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        try:
            run: Command = args.run
            return run(args)
        except CliError as exc:
            args.parser.error(str(exc))
        except BrokenPipeError:
            # The reader went away (``ohhell ... | head``): not an error of ours.
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            return 0
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


# A subcommand: it runs on the parsed arguments and returns the exit status.
Command = Callable[[argparse.Namespace], int]


# -- parsers ---------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ohhell", description="Oh Hell rules engine tools.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add(sub, "presets", "list the named presets", _cmd_presets)
    _add(sub, "options", "list every variant option with its default and values", _cmd_options)
    rules = _add(sub, "rules", "show the full rules of a preset", _cmd_rules)
    rules.add_argument("preset", metavar="PRESET")
    _add_set(rules)
    sim = _add(sub, "simulate", "play many games between reference players", _cmd_simulate)
    sim.add_argument("--variant", required=True, metavar="PRESET")
    _add_match(sim)
    sim.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    sim.add_argument("--replay", metavar="FILE", help="write the first game's replay here")
    sim.add_argument("--json", action="store_true", help="print the results as JSON")
    sim.add_argument("--progress", action="store_true", help="show progress even if not a tty")
    own = _add(sub, "selfplay", "play one game per seed and write each result", _cmd_selfplay)
    own.add_argument("--variant", required=True, metavar="PRESET")
    _add_set(own)
    own.add_argument(
        "--seats",
        required=True,
        help="one player per seat, comma-separated: a reference player's name, or "
        "FILE.py:NAME or MODULE:NAME for a Player class or factory taking a seed",
    )
    own.add_argument("--seeds", required=True, metavar="FIRST:END", help="seeds FIRST..END-1")
    own.add_argument("--out", metavar="FILE", help="write JSON lines here (default: stdout)")
    own.add_argument("--replays", action="store_true", help="keep each game's replay")
    rep = _add(sub, "replay", "play one game and write its replay", _cmd_replay)
    rep.add_argument("variant", metavar="PRESET")
    _add_match(rep)
    rep.add_argument("--out", required=True, metavar="FILE", help="where to write the replay")
    ver = _add(sub, "verify", "re-play a replay file and check it", _cmd_verify)
    ver.add_argument("file", metavar="FILE")
    return parser


def _add(sub: Any, name: str, help_text: str, run: Command) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=help_text[0].upper() + help_text[1:]
    )
    parser.set_defaults(run=run, parser=parser)
    return parser


def _add_set(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="change one option of the preset (repeatable); see 'ohhell options'",
    )


def _add_match(parser: argparse.ArgumentParser) -> None:
    _add_set(parser)
    parser.add_argument("--players", type=int, required=True, help="number of players")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    kinds = "; ".join(f"{name}: {note}" for name, note in PLAYER_NOTES.items())
    parser.add_argument(
        "--seats", required=True, help=f"one player per seat, comma-separated ({kinds})"
    )
    parser.add_argument("--samples", type=int, help="search: deals sampled per decision")
    parser.add_argument("--max-ms", type=float, help="search: time limit per decision")
    parser.add_argument("--noise", type=float, help="heuristic: chance of a random action")


# -- reading arguments -----------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """Read an option value: JSON where it parses (7, true, null), else the plain string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _variant(name: str, settings: list[str]) -> Variant:
    overrides: dict[str, Any] = {}
    for item in settings:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise CliError(f"--set needs OPTION=VALUE, not {item!r}")
        overrides[key.strip()] = parse_value(text.strip())
    try:
        return preset(name, **overrides)
    except InvalidVariantError as exc:
        raise CliError(str(exc)) from None
    except TypeError as exc:
        raise CliError(f"bad option value: {exc}") from None


def _match(
    args: argparse.Namespace, variant_name: str
) -> tuple[Variant, list[str], dict[str, dict[str, Any]]]:
    variant = _variant(variant_name, args.set)
    try:
        variant.check_players(args.players)
    except InvalidVariantError as exc:
        raise CliError(str(exc)) from None
    names = [n.strip() for n in args.seats.split(",")]
    for name in names:
        if name not in PLAYERS:
            raise CliError(f"unknown player {name!r} in --seats; choose from {', '.join(PLAYERS)}")
    if len(names) != args.players:
        raise CliError(f"--seats names {len(names)} players; give one per seat ({args.players})")
    if args.seed < 0:
        raise CliError(f"--seed must be 0 or more, not {args.seed}")
    options: dict[str, dict[str, Any]] = {"search": {}, "heuristic": {}}
    if args.samples is not None:
        options["search"]["samples"] = args.samples
    if args.max_ms is not None:
        options["search"]["max_ms"] = args.max_ms
    if args.noise is not None:
        options["heuristic"]["noise"] = args.noise
    for name, opts in options.items():
        try:
            make_player(name, 0, **opts)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    return variant, names, options


def _write_json(path: str, data: Any) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
            fh.write("\n")
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


# -- commands --------------------------------------------------------------------------------


def _cmd_presets(args: argparse.Namespace) -> int:
    width = max(map(len, PRESETS))
    for name, variant in PRESETS.items():
        players = f"{variant.min_players}-{variant.max_players} players"
        print(f"{name:<{width}}  {players}  {PRESET_NOTES[name]}")
    return 0


def _cmd_options(args: argparse.Namespace) -> int:
    for name, spec in OPTIONS.items():
        values = spec["values"]
        values = ", ".join(map(str, values)) if isinstance(values, list | tuple) else values
        print(f"{name}\n  default: {json.dumps(spec['default'])}\n  values:  {values}")
        print(f"  {spec['help']}")
    return 0


def _cmd_rules(args: argparse.Namespace) -> int:
    variant = _variant(args.preset, args.set)
    print(f"{variant.name}: {PRESET_NOTES.get(variant.name, 'a custom variant')}\n")
    for line in variant.describe():
        print(f"- {line}")
    print("\nOptions:")
    data = variant.to_dict()
    width = max(map(len, OPTIONS))
    for name in OPTIONS:
        print(f"  {name:<{width}}  {json.dumps(data[name])}")
    print("\nHand sizes per deal:")
    for players in range(variant.min_players, variant.max_players + 1):
        print(f"  {players} players: {_schedule_text(variant, players)}")
    return 0


def _schedule_text(variant: Variant, players: int) -> str:
    if variant.target_score is None:
        sizes = variant.schedule(players)
        return f"{' '.join(map(str, sizes))} ({len(sizes)} deals)"
    sizes = variant.base_schedule(players)
    cap = len(variant.schedule(players))
    return f"{' '.join(map(str, sizes))} repeated until the target score (at most {cap} deals)"


def _cmd_simulate(args: argparse.Namespace) -> int:
    variant, names, options = _match(args, args.variant)
    if args.games < 1:
        raise CliError(f"--games must be at least 1, not {args.games}")
    show = args.progress or sys.stderr.isatty()
    bar = _ProgressBar() if show else None
    first: list[dict[str, Any]] = []

    def keep_first(index: int, game: Any, seat_names: list[str]) -> None:
        if not first:
            first.append(game.replay())

    summary = simulate(
        variant, args.players, args.seed, names, args.games, bar, options, on_game=keep_first
    )
    if bar is not None:
        bar.done()
    if args.replay:
        _write_json(args.replay, first[0])
    rows = summary.table()
    if args.json:
        print(
            json.dumps(
                {
                    "variant": variant.name,
                    "players": args.players,
                    "seed": args.seed,
                    "games": summary.games,
                    "seats": names,
                    "results": rows,
                },
                indent=1,
            )
        )
        return 0
    print(
        f"{variant.name}, {args.players} players, {summary.games} games from seed {args.seed}"
        f" ({summary.deals / summary.games:.1f} deals a game); seats rotate each game"
    )
    print(
        f"{'player':<10} {'seats':>5} {'mean score':>16} {'mean rank':>15} "
        f"{'win share':>17} {'exact bids':>10}"
    )
    for r in rows:
        print(
            f"{r['player']:<10} {r['seats']:>5} {_pm(r, 'mean_score', 1):>16} "
            f"{_pm(r, 'mean_rank', 2):>15} {_pm(r, 'win_share', 3):>17} "
            f"{r['exact_bid_rate']:>10.1%}"
        )
    return 0


def _seed_range(text: str) -> range:
    first, sep, end = text.partition(":")
    try:
        seeds = range(int(first), int(end))
    except ValueError:
        seeds = range(0)
    if not sep or not seeds or seeds.start < 0:
        raise CliError(f"--seeds must be FIRST:END with 0 <= FIRST < END, not {text!r}")
    return seeds


def _cmd_selfplay(args: argparse.Namespace) -> int:
    variant = _variant(args.variant, args.set)
    seeds = _seed_range(args.seeds)
    try:
        seats = [load_player(spec.strip()) for spec in args.seats.split(",")]
        results = iter_games(variant, seats, seeds, replays=args.replays)
        first = next(results)
    except EngineError as exc:
        raise CliError(str(exc)) from None
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout  # noqa: SIM115
    try:
        for result in itertools.chain([first], results):
            out.write(json.dumps(result.to_dict(), separators=(",", ":")) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _pm(row: dict[str, Any], key: str, digits: int) -> str:
    ci = row[f"{key}_ci95"]
    text = f"{row[key]:.{digits}f}"
    return text if ci != ci else f"{text} ± {ci:.{digits}f}"  # ci != ci: NaN for one game


def _cmd_replay(args: argparse.Namespace) -> int:
    variant, names, options = _match(args, args.variant)
    seats = [
        make_player(n, derive_seed(args.seed, 0, s), **options.get(n, {}))
        for s, n in enumerate(names)
    ]
    game = play_game(variant, args.players, args.seed, seats)
    _write_json(args.out, game.replay())
    print(f"wrote {args.out}: {len(game.deals)} deals, totals {game.totals}, ranks {game.ranks()}")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    try:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CliError(f"{args.file} is not a text file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{args.file} is not valid JSON: {exc}") from None
    try:
        summary = verify_replay(data)
    except InvalidReplayError as exc:
        raise CliError(f"invalid replay {args.file}: {exc}") from None
    state = "finished" if summary["finished"] else "unfinished"
    print(f"OK: {summary['deals']} deals, {state}, totals {summary['totals']}")
    if summary["seed_committed"]:
        print(f"OK: seed {data['seed']} matches its commitment seed_sha256 {data['seed_sha256']}")
    return 0


class _ProgressBar:
    """A one-line progress bar on stderr, redrawn in place."""

    def __init__(self, width: int = 30) -> None:
        self.width = width
        self.start = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        filled = self.width * done // total
        elapsed = time.perf_counter() - self.start
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} games {elapsed:.1f}s"
        )
        sys.stderr.flush()

    def done(self) -> None:
        sys.stderr.write("\n")
        sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
