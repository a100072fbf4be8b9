"""The control lane at scale: ladder top-ups and rating writes with 10,000 bots and 1,000,000
stored ladder matches.

Loads, with SQL ``INSERT ... SELECT`` over ``generate_series`` (matches and seats only: no
replays, no rating history), into a PostgreSQL database of its own:

- ``--bots`` active bots opted into the ladders, two per owner;
- two running ladders with the same day of play, ``--per-day`` matches created in the last
  24 hours and ``--open`` tables playing: the oh-hell ladder also holds the older history,
  ``--matches`` finished ladder matches in all (one every 86400/``--per-day`` s back in time),
  while the blackout ladder holds only its last day (the anchor: small history);
- a rating per bot and ladder variant.

Then measures, in paired rounds (the two taking turns going first), nice'd:

- ``top-up``: one ladder top-up (the service's own ``ladders_top_up``, with the other ladder
  paused inside the same transaction, which is rolled back so every call sees the same
  state), on the large-history ladder against the small-history one: medians and p99 of
  ``--calls`` calls per round, and the rows the top-up read from the match and seat tables
  (``pg_stat_xact_user_tables``: sequential and index tuples read). Before each round the
  ladders' share windows are moved on and committed, as a live ladder's top-ups do once a
  minute; the top-ups that move it are measured on their own (``--calls`` of them, the
  window set a step back inside each rolled-back call);
- ``ratings``: ``ratings_apply_pending`` applying ``k`` finished ladder matches in one write
  (k = 1, 5, 20), each call on matches just finished and rolled back after: milliseconds per
  write and the rated matches per second one control worker sustains at that batch size.

``--explain`` prints EXPLAIN (ANALYZE, BUFFERS) of every query of a top-up of the large ladder.

    nice -n 10 .venv/bin/python -m bench.bench_control_lane [--rounds 5] [--calls 20] [--keep]
        [--bots 10000] [--matches 1000000] [--per-day 5000] [--open 250] [--explain]

Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth); uses the database
ohhell_bench_control_lane (``BENCH_DATABASE_URL`` names another) and drops it at the end unless
``--keep``; a later run with ``--keep`` reuses a database holding the same amounts (migrating
it first).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

DB_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ohhell_bench_control_lane"
)
# The helper module reads its database from this variable when imported.
os.environ["BENCH_DATABASE_URL"] = DB_URL

from bench import bench_ratings_speed as speed  # noqa: E402

DB_NAME = DB_URL.rsplit("/", 1)[1]
LARGE, SMALL = "oh-hell", "blackout"


def _psql_value(sql: str, database: str = "postgres") -> str:
    result = subprocess.run(
        [*speed.PSQL, "-d", database, "-tAc", sql], check=False, capture_output=True, text=True
    )
    return result.stdout.strip()


def _amounts(args: argparse.Namespace) -> str:
    return f"{args.bots}|{args.matches + args.per_day + 2 * args.open}"


def _holds_data(args: argparse.Namespace) -> bool:
    if _psql_value(f"SELECT 1 FROM pg_database WHERE datname = '{DB_NAME}'") != "1":
        return False
    counts = _psql_value(
        "SELECT (SELECT count(*) FROM tournaments_bot), (SELECT count(*) FROM tournaments_match)",
        DB_NAME,
    )
    return counts == _amounts(args)


def _execute(sql: str, params: list | dict | None = None) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])


# One ladder's matches: ``count`` finished ones ending now - (count - g) * step, numbered from
# ``first`` (ids and rating sequences), then ``open`` running ones, created now.
MATCHES_SQL = """
INSERT INTO tournaments_match (
    id, ladder_id, variant_id, round, duplicate_group, seed, time_limit_ms, status, attempts,
    max_attempts, claimed_by, error, started_at, finished_at, rated, rated_at, rating_sequence,
    rating_group, created_at, updated_at, unsent, time_bank_ms, table_round)
SELECT %(first)s + g, %(ladder)s, %(variant)s, 0, '', g, 1000,
    CASE WHEN g < %(count)s THEN 'finished' ELSE 'running' END, 1, 3, '', '',
    t - interval '1 minute', CASE WHEN g < %(count)s THEN t END, g < %(count)s,
    CASE WHEN g < %(count)s THEN t END, CASE WHEN g < %(count)s THEN %(first)s + g END,
    '', t - interval '2 minutes', t, false, 0, ''
FROM generate_series(0, %(count)s + %(open)s - 1) AS g,
    LATERAL (SELECT now() - GREATEST(%(count)s - g, 0) * %(step)s * interval '1 second') AS x(t)
"""
# Four seats a match, four consecutive bots (so never two of one owner: bot i and i + bots/2
# share one), scores by seat.
SEATS_SQL = """
INSERT INTO tournaments_matchseat (
    match_id, seat, bot_id, score, rank, bids_exact, bids_total, faults, disqualified,
    refused_every_request, refusal_counted)
SELECT m.id, s, %(bot0)s + ((m.id * 4 + s) %% %(bots)s), 100 - s * 10, s + 1, 5, 10, 0, false,
    false, false
FROM tournaments_match AS m, generate_series(0, 3) AS s
WHERE m.ladder_id = %(ladder)s
"""


def load(args: argparse.Namespace) -> None:
    """Recreate the database and load bots, two ladders, their matches and ratings."""
    speed.create_database()
    from tournaments.models import Ladder, Variant

    started = time.perf_counter()
    owners = max(1, args.bots // 2)
    _execute(
        "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,"
        " is_staff, is_active, date_joined) SELECT '!', false, 'owner' || g, '', '',"
        " 'owner' || g || '@example.org', false, true, now() FROM generate_series(1, %s) AS g",
        [owners],
    )
    # Every account confirmed its address: the ladders seat bots of confirmed accounts only.
    _execute(
        "INSERT INTO tournaments_confirmedemail (user_id, email, confirmed_at)"
        " SELECT id, email, now() FROM auth_user"
    )
    _execute(
        "INSERT INTO tournaments_bot (name, description, endpoint_url, secret, status,"
        " disabled_cause, disabled_reason, consecutive_failures, created_at, updated_at,"
        " owner_id, ladder_opt_in, version, accept_invitations, endpoint_addresses,"
        " security_warnings, accepts_scrimmages, reference_player) SELECT 'bot-' || g, '',"
        " 'https://b' || g || '.example.org/', 's' || g, 'active', '', '', 0, now(), now(),"
        " (SELECT min(id) FROM auth_user) + g %% %s, true, 1, true, '[]', '[]', false, ''"
        " FROM generate_series(0, %s) AS g",
        [owners, args.bots - 1],
    )
    bot0 = _psql_value("SELECT min(id) FROM tournaments_bot", DB_NAME)
    step = 86400 / args.per_day
    first = 0
    for name, count in ((LARGE, args.matches), (SMALL, args.per_day)):
        variant = Variant.objects.get(name=name)
        ladder, _ = Ladder.objects.get_or_create(variant=variant)
        _execute(
            MATCHES_SQL,
            {
                "first": first + 1,
                "ladder": ladder.pk,
                "variant": variant.pk,
                "count": count,
                "open": args.open,
                "step": step,
            },
        )
        first += count + args.open
        _execute(SEATS_SQL, {"bot0": int(bot0), "bots": args.bots, "ladder": ladder.pk})
        _execute(
            "INSERT INTO tournaments_rating (bot_id, variant_id, mu, sigma, matches, updated_at)"
            " SELECT id, %s, 25 + (id %% 97) / 10.0, 1 + (id %% 31) / 10.0, 400, now()"
            " FROM tournaments_bot",
            [variant.pk],
        )
        print(f"  {name}: {count:,} matches loaded, {time.perf_counter() - started:.0f} s")
    _execute(
        "SELECT setval(pg_get_serial_sequence('tournaments_match', 'id'), %s)",
        [first],
    )
    from django.db import connections

    connections.close_all()
    subprocess.run([*speed.PSQL, "-d", DB_NAME, "-c", "VACUUM ANALYZE"], check=True)
    print(f"loaded in {time.perf_counter() - started:.0f} s (with VACUUM ANALYZE)")


def prepare(args: argparse.Namespace) -> None:
    if _holds_data(args):
        speed.setup_django()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        subprocess.run([*speed.PSQL, "-d", DB_NAME, "-c", "ANALYZE"], check=True)
        print(f"reusing {DB_NAME}")
    else:
        print(f"loading {args.bots:,} bots and {args.matches:,} ladder matches into {DB_NAME}")
        load(args)


# --- the measurements ------------------------------------------------------------------------

READS_SQL = """
SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0)
FROM pg_stat_xact_user_tables WHERE relname IN ('tournaments_match', 'tournaments_matchseat')
"""


@dataclass
class Call:
    """One measured call: its time and the match and seat rows it read."""

    ms: float
    rows: int
    made: int


def _reads() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(READS_SQL)
        return int(cursor.fetchone()[0])


def move_windows() -> None:
    """Move both ladders' share windows on and commit it, as a live ladder's top-ups do once
    a step (``SHARE_WINDOW_STEP``): the rolled-back calls would each move it again."""
    from django.db import transaction
    from django.utils import timezone

    from tournaments.models import Ladder
    from tournaments.services.shares import shares_move_window

    with transaction.atomic():
        for ladder in Ladder.objects.select_for_update().select_related("variant"):
            shares_move_window(ladder, now=timezone.now())


def top_up(ladder_id: int, other_id: int, *, moving: bool = False) -> Call:
    """One top-up of one ladder (the other paused), rolled back afterwards; ``moving``: one
    that moves the share window on by a step."""
    from django.db import transaction
    from django.db.models import F

    from tournaments.models import Ladder, LadderStatus
    from tournaments.selectors.ladders import SHARE_WINDOW_STEP
    from tournaments.services.ladders import ladders_top_up

    with transaction.atomic():
        Ladder.objects.filter(pk=other_id).update(status=LadderStatus.PAUSED)
        if moving:
            Ladder.objects.filter(pk=ladder_id).update(
                shares_since=F("shares_since") - SHARE_WINDOW_STEP
            )
        before = _reads()
        started = time.perf_counter()
        made = ladders_top_up()
        elapsed = (time.perf_counter() - started) * 1000
        rows = _reads() - before
        transaction.set_rollback(True)
    if made != 1:
        raise RuntimeError(f"a top-up made {made} tables, expected 1")
    return Call(elapsed, rows, made)


def finish_and_rate(ladder_id: int, k: int) -> Call:
    """Finish ``k`` of the ladder's running matches, then rate them in one write; rolled back."""
    from django.db import transaction
    from django.utils import timezone

    from tournaments.models import Match, MatchStatus
    from tournaments.services.ratings import ratings_apply_pending

    with transaction.atomic():
        ids = list(
            Match.objects.filter(ladder_id=ladder_id, status=MatchStatus.RUNNING)
            .order_by("-pk")
            .values_list("pk", flat=True)[:k]
        )
        Match.objects.filter(pk__in=ids).update(
            status=MatchStatus.FINISHED, finished_at=timezone.now()
        )
        before = _reads()
        started = time.perf_counter()
        made = ratings_apply_pending()
        elapsed = (time.perf_counter() - started) * 1000
        rows = _reads() - before
        transaction.set_rollback(True)
    if made != k:
        raise RuntimeError(f"rated {made} matches, expected {k}")
    return Call(elapsed, rows, made)


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def paired(
    a: Callable[[], Call], b: Callable[[], Call], rounds: int, calls: int
) -> tuple[list[list[Call]], list[list[Call]]]:
    """``rounds`` rounds of ``calls`` calls of each, the two taking turns going first."""
    a(), b()  # warm-up of both
    out_a: list[list[Call]] = []
    out_b: list[list[Call]] = []
    for r in range(rounds):
        move_windows()
        order = [(a, out_a), (b, out_b)] if r % 2 == 0 else [(b, out_b), (a, out_a)]
        for call, out in order:
            out.append([call() for _ in range(calls)])
    return out_a, out_b


def _summary(runs: list[list[Call]]) -> str:
    p50 = [statistics.median(c.ms for c in run) for run in runs]
    p99 = [_p99([c.ms for c in run]) for run in runs]
    rows = statistics.median(c.rows for run in runs for c in run)
    return (
        f"{statistics.median(p50):.1f} ({min(p50):.1f}-{max(p50):.1f}) |"
        f" {statistics.median(p99):.1f} ({min(p99):.1f}-{max(p99):.1f}) | {rows:,.0f}"
    )


def explain_top_up(ladder_id: int, other_id: int) -> None:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from tournaments.models import Ladder, LadderStatus
    from tournaments.services.ladders import ladders_top_up

    with transaction.atomic():
        Ladder.objects.filter(pk=other_id).update(status=LadderStatus.PAUSED)
        with CaptureQueriesContext(connection) as queries:
            ladders_top_up()
        with connection.cursor() as cursor:
            for query in queries.captured_queries:
                sql = query["sql"]
                if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                    continue
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
                plan = "\n".join(row[0] for row in cursor.fetchall())
                print(f"\n--- {sql[:300]}\n{plan}")
        transaction.set_rollback(True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20, help="calls per round")
    parser.add_argument("--bots", type=int, default=10_000)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--per-day", type=int, default=5000, help="matches in the last day")
    parser.add_argument("--open", type=int, default=250, help="tables playing per ladder")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    args = parser.parse_args()

    prepare(args)
    speed.setup_django()
    from django.test.utils import override_settings
    from django.utils import timezone

    from tournaments.models import Ladder
    from tournaments.services.shares import shares_rebuild

    large = Ladder.objects.get(variant__name=LARGE).pk
    small = Ladder.objects.get(variant__name=SMALL).pk
    # A running ladder's shares are counted (its first top-up did it; each call below is rolled
    # back, so it would count them afresh every time).
    started = time.perf_counter()
    for ladder in Ladder.objects.filter(pk__in=[large, small]):
        shares_rebuild(ladder, now=timezone.now())
    print(f"shares counted from the last day's tables in {time.perf_counter() - started:.1f} s")
    from django.db import connection

    connection.close()  # VACUUM runs outside a transaction, as autovacuum would after a rebuild
    subprocess.run([*speed.PSQL, "-d", DB_NAME, "-c", "VACUUM ANALYZE tournaments_laddershare"])
    # One table short of the tables playing: each top-up makes one table.
    with override_settings(LADDER_MATCHES_IN_FLIGHT=args.open + 1):
        if args.explain:
            explain_top_up(large, small)
        print(
            f"\ntop-up, {args.rounds} paired rounds of {args.calls} calls; {args.bots:,} bots,"
            f" {args.open} tables playing per ladder, {args.per_day:,} matches in the last day"
        )
        print("| ladder | p50 ms (min-max of rounds) | p99 ms (min-max) | match+seat rows read |")
        print("|---|---|---|---|")
        runs_large, runs_small = paired(
            lambda: top_up(large, small), lambda: top_up(small, large), args.rounds, args.calls
        )
        print(f"| {args.matches:,} matches stored | {_summary(runs_large)} |")
        print(f"| {args.per_day:,} matches stored (anchor) | {_summary(runs_small)} |")
        moving = [top_up(large, small, moving=True) for _ in range(args.calls)]
        print(f"| {args.matches:,}, a top-up moving the window | {_summary([moving])} |")
    print(
        f"\nrating writes on the {args.matches:,}-match ladder, {args.rounds} paired rounds of"
        f" {args.calls} writes, against one match a write (the anchor)"
    )
    print("| matches per write | ms per write p50 (min-max) | p99 | rows read | matches/s |")
    print("|---|---|---|---|---|")
    for k in (5, 20):

        def batch(k: int = k) -> Call:
            return finish_and_rate(large, k)

        runs_one, runs_k = paired(
            lambda: finish_and_rate(large, 1),
            batch,
            args.rounds,
            args.calls,
        )
        for size, runs in ((1, runs_one), (k, runs_k)):
            p50 = statistics.median(statistics.median(c.ms for c in run) for run in runs)
            print(f"| {size} | {_summary(runs)} | {size * 1000 / p50:.0f} |")
    print(f"\nload average (1, 5, 15 min) after the run: {os.getloadavg()}")
    if not args.keep:
        speed.drop_database()


if __name__ == "__main__":
    main()
