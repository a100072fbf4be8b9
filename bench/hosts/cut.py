"""The cut: one of three hosts loses its link mid-match; then every match must have ended
exactly once and the ratings must equal a recompute."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

from bench.hosts import NAME, TABLE
from bench.hosts.cast import Cast, host_of, start_tournament, tournament_done
from bench.hosts.hub import Host, wait_ready
from bench.support.netns import set_link
from bench.support.processes import wait_until


@dataclass
class Verdict:
    lines: list[str]
    ok: bool


def check_exactly_once(tournament_id: int) -> Verdict:
    """Every match ended once, one update per rated unit, ratings equal to a recompute."""
    from django.db.models import Count

    from tournaments.models import (
        Match,
        MatchSeat,
        MatchStatus,
        Rating,
        RatingHistory,
        Replay,
        SeatFault,
    )
    from tournaments.services.recompute import ratings_recompute

    lines: list[str] = []
    ok = True

    def check(condition: bool, text: str) -> None:
        nonlocal ok
        ok = ok and condition
        lines.append(f"{'ok ' if condition else 'BAD'} {text}")

    matches = Match.objects.filter(tournament_id=tournament_id)
    ids = list(matches.values_list("pk", flat=True))
    statuses = dict(
        matches.values_list("status").annotate(n=Count("pk")).values_list("status", "n")
    )
    check(statuses == {MatchStatus.FINISHED: len(ids)}, f"{len(ids)} matches, status {statuses}")
    replays = Replay.objects.filter(match_id__in=ids).values("match_id").annotate(n=Count("pk"))
    check(
        len(replays) == len(ids) and all(r["n"] == 1 for r in replays),
        f"one replay per match: {len(replays)} matches with replays, most "
        f"{max((r['n'] for r in replays), default=0)} each",
    )
    unscored = MatchSeat.objects.filter(match_id__in=ids, score__isnull=True).count()
    check(unscored == 0, f"seats without a score: {unscored}")
    rated = matches.filter(rated=True)
    groups = set(rated.exclude(rating_group="").values_list("rating_group", flat=True))
    singles = rated.filter(rating_group="").count()
    units = len(groups) + singles
    history = RatingHistory.objects.filter(match_id__in=ids)
    per_unit = list(history.values("match_id").annotate(n=Count("pk")).values_list("n", flat=True))
    check(
        rated.count() == len(ids) and len(per_unit) == units and set(per_unit) <= {TABLE},
        f"rated units: {units} ({len(groups)} duplicate groups, {singles} single matches), "
        f"each with one update of {TABLE} history rows: {len(per_unit)} updates, "
        f"{history.count()} rows",
    )
    retried = list(matches.filter(attempts__gt=1).values_list("pk", "attempts", "claimed_by"))
    lines.append(
        f"    matches played more than once: {len(retried)} "
        + ", ".join(f"#{pk} x{n} (kept {host_of(c)})" for pk, n, c in retried)
    )
    faults = dict(
        SeatFault.objects.filter(seat__match_id__in=ids)
        .values_list("kind")
        .annotate(n=Count("pk"))
        .values_list("kind", "n")
    )
    lines.append(f"    bot faults recorded in the tournament's results: {faults or 'none'}")

    def snapshot() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        return (
            list(Rating.objects.order_by("bot_id", "variant_id").values_list(
                "bot_id", "variant_id", "mu", "sigma", "matches")),
            list(RatingHistory.objects.order_by("bot_id", "variant_id", "sequence").values_list(
                "bot_id", "variant_id", "match_id", "sequence", "mu_before", "sigma_before",
                "mu_after", "sigma_after", "at")),
        )  # fmt: skip

    live = snapshot()
    ratings_recompute()
    again = snapshot()
    check(
        live == again,
        f"ratings and history equal a recompute, bit for bit: {len(live[0])} ratings, "
        f"{len(live[1])} history rows",
    )
    return Verdict(lines, ok)


def cut_run(
    all_hosts: list[Host], cast: Cast, args: argparse.Namespace
) -> tuple[Verdict, list[str]]:
    from django.db.models import Max

    from tournaments.models import Match, MatchStatus, Tournament

    victim = all_hosts[-1]
    events: list[str] = []
    t0 = time.monotonic()

    def note(text: str) -> None:
        events.append(f"{time.monotonic() - t0:6.1f} s  {text}")
        print(events[-1], flush=True)

    for host in all_hosts:
        host.start()
    try:
        wait_ready(all_hosts)
        tournament_id = start_tournament(
            cast, f"{NAME} {time.strftime('%H%M%S')} cut", "duplicate", args.cut_rounds
        )
        note(f"duplicate tournament {tournament_id} started: {args.cut_rounds} round(s)")

        def victim_playing() -> list[int]:
            return list(
                Match.objects.filter(
                    tournament_id=tournament_id,
                    status=MatchStatus.RUNNING,
                    claimed_by__startswith=f"{victim.plan.name}:",
                ).values_list("pk", flat=True)
            )

        wait_until(lambda: bool(victim_playing()), 300, f"{victim.plan.name} to play a match")
        time.sleep(0.7)  # into the match
        held = victim_playing()
        set_link(victim.plan, up=False)
        matches = Match.objects.filter(tournament_id=tournament_id)
        done = matches.filter(status=MatchStatus.FINISHED).count()
        note(
            f"{victim.plan.veth_root} down: {victim.plan.name} cut off while playing matches "
            f"{held}; {done} of {matches.count()} finished"
        )
        if args.no_restore:
            note(f"{victim.plan.name} stays cut off")
        else:
            time.sleep(args.cut_seconds)
            set_link(victim.plan, up=True)
            note(f"{victim.plan.veth_root} up again after {args.cut_seconds} s")
        wait_until(lambda: tournament_done(tournament_id), 1800, "the tournament to finish")
        last = Match.objects.filter(tournament_id=tournament_id).aggregate(m=Max("finished_at"))
        started = Tournament.objects.get(pk=tournament_id).started_at
        note(
            "tournament finished and rated; last result "
            f"{(last['m'] - started).total_seconds():.1f} s after its start"
        )
        for pk in held:
            match = Match.objects.get(pk=pk)
            note(
                f"match {pk}, held by {victim.plan.name} at the cut: {match.status}, "
                f"{match.attempts} attempt(s), result kept from {host_of(match.claimed_by)}"
            )
        if not args.no_restore:
            try:
                wait_ready([victim], timeout=120)
                note(f"{victim.plan.name}'s worker answers through the broker again")
            except RuntimeError as exc:
                note(f"{victim.plan.name}'s worker does not answer 120 s after: {exc}")
        log = victim.log.read_text(errors="replace")
        note(
            f"{victim.plan.name}'s log: {log.count('heartbeat missed')} missed heartbeats, "
            f"{log.count('recording match')} failed tries to record a result"
        )
    finally:
        if args.no_restore:
            set_link(victim.plan, up=True)  # so its worker can be stopped cleanly
        for host in all_hosts:
            host.stop()
    return check_exactly_once(tournament_id), events
