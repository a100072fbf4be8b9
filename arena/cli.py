"""``ohhell-arena``: example bots, a bot checker and local matches, for bot authors."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from arena.checker import check_bot
from arena.limits import Limits
from arena.local import local_match
from arena.netpolicy import NetworkPolicy
from arena.timebank import DEFAULT_TIME_BANK_MS, MAX_TIME_BANK_MS, TimeBank
from engine.errors import InvalidVariantError
from engine.players import PLAYERS
from engine.presets import PRESETS, preset


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ohhell-arena", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run a reference player as an HTTP bot")
    serve.add_argument("--player", choices=tuple(PLAYERS), default="heuristic")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8001)
    serve.add_argument("--seed", type=int, default=0)
    serve.add_argument("--secret", help="verify request signatures with this secret")

    check = sub.add_parser("check", help="check a bot endpoint and give a verdict")
    check.add_argument("url")
    check.add_argument("--secret", default="", help="the bot's signing secret")
    check.add_argument("--samples", type=int, default=28)
    check.add_argument("--seed", type=int, default=0)
    check.add_argument("--time-limit-ms", type=int, default=1000)
    _time_bank_flag(check)
    _network_flags(check)

    match = sub.add_parser("match", help="play a local match against reference players")
    match.add_argument("urls", nargs="+", help="endpoints of the bots to seat first")
    match.add_argument(
        "--against",
        default="heuristic,heuristic,random",
        help=f"comma-separated reference players ({', '.join(tuple(PLAYERS))})",
    )
    match.add_argument("--variant", default="oh-hell", help="a preset name")
    match.add_argument("--seed", type=int, default=1)
    match.add_argument("--secret", default="")
    match.add_argument("--time-limit-ms", type=int, default=1000)
    _time_bank_flag(match)
    match.add_argument("--out", type=Path, help="write the replay to this file")
    _network_flags(match)
    return parser


def _bank_ms(text: str) -> int:
    value = int(text)
    if not 0 <= value <= MAX_TIME_BANK_MS:
        raise argparse.ArgumentTypeError(f"must be 0 to {MAX_TIME_BANK_MS} ms, not {value}")
    return value


def _time_bank_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--time-bank-ms",
        type=_bank_ms,
        default=DEFAULT_TIME_BANK_MS,
        help="each seat's time bank for answers over the time limit (0: none)",
    )


def _bank_line(bank: TimeBank) -> str:
    timing = bank.summary()
    return (
        f"{timing['time_bank_used_ms']} of {timing['time_bank_ms']} ms used "
        f"({timing['time_bank_left_ms']} ms left), {timing['over_limit']} of "
        f"{timing['decisions']} answers over the time limit"
    )


def _network_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict-network",
        action="store_true",
        help="refuse loopback addresses, as the hosted arena does",
    )


def _policy(args: argparse.Namespace) -> NetworkPolicy:
    return NetworkPolicy(allow_loopback=not args.strict_network)


def _check(args: argparse.Namespace) -> int:
    report = asyncio.run(
        check_bot(
            args.url,
            args.secret,
            samples=args.samples,
            seed=args.seed,
            time_limit_ms=args.time_limit_ms,
            time_bank_ms=args.time_bank_ms,
            policy=_policy(args),
        )
    )
    print(f"endpoint: {report.endpoint}")
    print(f"hello:    {'ok ' + json.dumps(report.hello_answer) if report.hello_ok else 'FAILED'}")
    answered = len(report.latencies_ms)
    print(f"samples:  {answered}/{report.samples} answered legally")
    if answered:
        print(
            f"latency:  p50 {report.percentile(0.5):.1f} ms, p95 {report.percentile(0.95):.1f}"
            f" ms, max {max(report.latencies_ms):.1f} ms"
        )
    if report.bank.latencies_ms:
        print(f"bank:     {_bank_line(report.bank)}")
    if report.probes:
        refused = sum(not probe.accepted for probe in report.probes)
        print(f"signing:  {refused}/{len(report.probes)} probes refused, as they must be")
        for probe in report.probes:
            print(f"  - {probe.describe()}")
    print(f"verdict:  {'PASS' if report.passed else 'FAIL'}")
    for reason in report.reasons():
        print(f"  - {reason}")
    return 0 if report.passed else 1


def _match(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    opponents = [name for name in args.against.split(",") if name]
    unknown = [name for name in opponents if name not in tuple(PLAYERS)]
    if unknown:
        parser.error(f"unknown reference player {unknown[0]!r}; choose from {tuple(PLAYERS)}")
    if args.variant not in PRESETS:
        parser.error(f"unknown variant {args.variant!r}; choose one of {', '.join(PRESETS)}")
    variant = preset(args.variant)
    try:
        variant.check_players(len(args.urls) + len(opponents))
    except InvalidVariantError as exc:
        parser.error(str(exc))
    outcome = asyncio.run(
        local_match(
            variant=variant,
            endpoints=args.urls,
            opponents=opponents,
            seed=args.seed,
            secret=args.secret,
            limits=Limits(time_limit_ms=args.time_limit_ms, time_bank_ms=args.time_bank_ms),
            policy=_policy(args),
        )
    )
    for seat in sorted(outcome.seats, key=lambda s: (s.rank, s.seat)):
        faults = ", ".join(f"{k} x{v.count}" for k, v in seat.stats.faults.items()) or "none"
        print(
            f"{seat.rank}. seat {seat.seat} {seat.label}: {seat.score} points, "
            f"{seat.exact_bids}/{seat.deals} exact bids, faults: {faults}"
        )
        if seat.bank.latencies_ms:
            timing = seat.bank.summary()
            print(
                f"   latency median {timing['median_ms']} ms, max {timing['max_ms']} ms; "
                f"time bank {_bank_line(seat.bank)}"
            )
    if args.out:
        args.out.write_text(json.dumps(outcome.replay))
        print(f"replay written to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "serve":
        from arena.botserver import serve

        serve(args.player, host=args.host, port=args.port, seed=args.seed, secret=args.secret)
        return 0
    if args.command == "check":
        return _check(args)
    return _match(args, parser)


if __name__ == "__main__":
    sys.exit(main())
