"""Rating speed: the cost of one update, and a full recompute in PostgreSQL.

``updates``: CPU time of one TrueSkill update per table size (3 to 7 seats),
``tournaments.maths.ratings.rate`` against the bare ``trueskill`` package call on the same
tables, taking turns round by round on one core.

``recompute``: loads 1,000 bots and 100,000 finished matches of 4 seats (scores drawn around
a hidden strength per bot) into a fresh database with COPY, then times
``ratings_apply_pending`` rating them all from scratch, and ``ratings_recompute`` rebuilding
every rating and history row; checks the two give identical numbers.

    .venv/bin/python bench/bench_ratings_speed.py updates [--rounds 7]
    .venv/bin/python bench/bench_ratings_speed.py recompute [--matches 100000] [--profile]

Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth); uses the database
ohhell_bench_ratings and drops it at the end (``--keep`` keeps it).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import trueskill

from engine.scoring import shared_ranks
from tournaments.maths.ratings import RatingParams, rate

DB_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ohhell_bench_ratings"
)
DB_NAME = DB_URL.rsplit("/", 1)[1]
BASE_ENV = {
    "DATABASE_URL": DB_URL,
    "DEBUG": "0",
    "SECRET_KEY": "bench-only-secret-key-" + "x" * 30,
    "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
    "LOG_LEVEL": "warning",
    "DJANGO_SETTINGS_MODULE": "config.settings",
    # No broker here: the measured requests queue nothing, and DEBUG off needs one or this.
    "CELERY_EAGER": "1",
}
PSQL = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-v", "ON_ERROR_STOP=1"]


# --- (a) one update ------------------------------------------------------------------------


def _tables(seats: int, count: int, rng: random.Random) -> list[tuple[list, list[int]]]:
    """Random tables: (mu, sigma) before and ranks, about one in twenty pairs tied."""
    tables = []
    for _ in range(count):
        before = [(rng.gauss(25, 5), rng.uniform(1.0, 25 / 3)) for _ in range(seats)]
        scores = [rng.randrange(20) for _ in range(seats)]
        tables.append((before, shared_ranks(scores)))
    return tables


# A contender rates one table: (mu, sigma) by seat before, and ranks; the package answers with
# its own rating groups, maths.ratings with (mu, sigma) pairs.
Contender = Callable[[list[tuple[float, float]], list[int]], Sequence[Any]]


def _contenders(params: RatingParams) -> dict[str, Contender]:
    env = trueskill.TrueSkill(
        mu=params.mu,
        sigma=params.sigma,
        beta=params.beta,
        tau=params.tau,
        draw_probability=params.draw_probability,
    )

    def package(before: list[tuple[float, float]], ranks: list[int]) -> list[Any]:
        return env.rate([(trueskill.Rating(mu, sigma),) for mu, sigma in before], ranks=ranks)

    return {
        "ratings.rate": lambda before, ranks: rate(params, before, ranks),
        "trueskill package": package,
    }


def _largest_difference(params: RatingParams, tables: list) -> float:
    """How far ratings.rate strays from the package on these tables (0: bit for bit)."""
    package = _contenders(params)["trueskill package"]
    worst = 0.0
    for before, ranks in tables:
        theirs = [(g[0].mu, g[0].sigma) for g in package(before, ranks)]
        for (mu, sigma), (mu2, sigma2) in zip(rate(params, before, ranks), theirs, strict=True):
            worst = max(worst, abs(mu - mu2), abs(sigma - sigma2))
    return worst


def bench_updates(args: argparse.Namespace) -> None:
    """Print CPU microseconds per update by table size, both contenders side by side."""
    params = RatingParams()
    contenders = _contenders(params)
    print(
        f"TrueSkill update, CPU time per update (median of {args.rounds} rounds of "
        f"{args.tables} tables, contenders taking turns), the package's default backend:\n"
    )
    names = " | ".join(f"{name} (us)" for name in contenders)
    print(f"| seats | {names} | ratio | largest difference in mu or sigma |")
    print("|---|" + "---|" * (len(contenders) + 2))
    for seats in range(3, 8):
        tables = _tables(seats, args.tables, random.Random(seats))
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(args.rounds):
            for name, call in contenders.items():
                started = time.process_time()
                for before, ranks in tables:
                    call(before, ranks)
                times[name].append((time.process_time() - started) / len(tables) * 1e6)
        med = [statistics.median(times[name]) for name in contenders]
        diff = _largest_difference(params, tables)
        print(
            f"| {seats} | "
            + " | ".join(f"{m:.0f}" for m in med)
            + f" | {med[0] / med[1]:.2f} | {diff:.1e} |"
        )
        sys.stdout.flush()


# --- the bench database --------------------------------------------------------------------


def create_database() -> None:
    """Recreate the bench database and migrate it (in this process: Django is set up here)."""
    subprocess.run([*PSQL, "-c", f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)"], check=True)
    subprocess.run([*PSQL, "-c", f"CREATE DATABASE {DB_NAME}"], check=True)
    setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def drop_database() -> None:
    from django.db import connections

    connections.close_all()
    subprocess.run([*PSQL, "-c", f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)"], check=True)


def setup_django() -> None:
    for key in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(key, None)
    os.environ.update(BASE_ENV)
    import django

    django.setup()


def create_bots(count: int) -> tuple[list[int], int]:
    """Insert ``count`` active bots (100 per owner); return their ids and oh-hell's id."""
    from django.contrib.auth.models import User

    from tournaments.models import Bot, Variant

    owners = User.objects.bulk_create(
        [User(username=f"owner{i}") for i in range(max(1, count // 100))]
    )
    bots = Bot.objects.bulk_create(
        [
            Bot(
                owner=owners[i % len(owners)],
                name=f"bot-{i:05d}",
                endpoint_url=f"https://b{i}.example.org/",
                secret=f"s{i}",
                status="active",
            )
            for i in range(count)
        ],
        batch_size=2000,
    )
    return [b.pk for b in bots], Variant.objects.get(name="oh-hell").pk


def copy_rows(model, columns: Sequence[str], rows) -> None:
    """COPY rows (tuples in ``columns`` order) into the model's table."""
    from django.db import connection

    connection.ensure_connection()
    table = model._meta.db_table
    sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with connection.connection.cursor() as cursor, cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)


MATCH_COLUMNS = [
    *("variant_id", "round", "duplicate_group", "seed", "time_limit_ms", "status"),
    *("attempts", "max_attempts", "claimed_by", "error", "started_at", "finished_at"),
    *("rated", "created_at", "updated_at", "rating_group", "unsent", "time_bank_ms"),
    "table_round",
]
SEAT_COLUMNS = [
    *("match_id", "seat", "bot_id", "score", "rank"),
    *("bids_exact", "bids_total", "faults", "disqualified", "refused_every_request"),
    "refusal_counted",
]


def load_unrated_matches(count: int, bot_ids: list[int], variant_id: int, seed: int) -> None:
    """Insert ``count`` finished, unrated matches of 4 seats with realistic scores."""
    from django.db import connection

    from tournaments.models import Match, MatchSeat

    rng = random.Random(seed)
    strength = {b: rng.gauss(0, 15) for b in bot_ids}
    start = datetime(2024, 1, 1, tzinfo=UTC)
    times = [start + timedelta(seconds=30 * i) for i in range(count)]
    copy_rows(
        Match,
        MATCH_COLUMNS,
        (
            (
                variant_id,
                0,
                "",
                rng.getrandbits(62),
                1000,
                "finished",
                1,
                3,
                "",
                "",
                t,
                t,
                False,
                t,
                t,
                "",
                False,
                0,
                "",
            )
            for t in times
        ),
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM tournaments_match ORDER BY id")
        match_ids = [row[0] for row in cursor.fetchall()]

    def seats():
        for match_id in match_ids:
            table = rng.sample(bot_ids, 4)
            scores = [max(0, round(100 + strength[b] + rng.gauss(0, 21))) for b in table]
            ranks = shared_ranks(scores)
            for seat, (bot, score) in enumerate(zip(table, scores, strict=True)):
                yield (match_id, seat, bot, score, ranks[seat], 9, 19, 0, False, False, False)

    copy_rows(
        MatchSeat,
        SEAT_COLUMNS,
        seats(),
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


# --- (b) recompute ---------------------------------------------------------------------------


def _snapshot() -> tuple[dict, int]:
    from tournaments.models import Rating, RatingHistory

    ratings = {
        (r[0], r[1]): r[2:]
        for r in Rating.objects.values_list("bot_id", "variant_id", "mu", "sigma", "matches")
    }
    return ratings, RatingHistory.objects.count()


def _timed(label: str, call: Callable[[], int]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    done = call()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"| {label} | {done:,} | {wall:.1f} | {cpu:.1f} | {wall / done * 1e6:.0f} |",
        flush=True,
    )
    return wall, cpu


def bench_recompute(args: argparse.Namespace) -> None:
    """Load the matches, rate them from scratch, recompute, and check both agree."""
    create_database()
    from tournaments.services.ratings import ratings_apply_pending
    from tournaments.services.recompute import ratings_recompute

    started = time.perf_counter()
    bot_ids, variant_id = create_bots(args.bots)
    load_unrated_matches(args.matches, bot_ids, variant_id, seed=1)
    print(
        f"{args.matches:,} finished matches of 4 seats among {args.bots:,} bots loaded in "
        f"{time.perf_counter() - started:.0f} s\n"
    )
    print("| step | matches | wall s | Python CPU s | wall us per match |")
    print("|---|---|---|---|---|")
    _timed("ratings_apply_pending, from scratch", ratings_apply_pending)
    applied, history = _snapshot()
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
    _timed("ratings_recompute, end to end", ratings_recompute)
    if args.profile:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    recomputed, history_after = _snapshot()
    same = applied == recomputed and history == history_after
    print(
        f"\n{len(recomputed):,} ratings, {history_after:,} history rows; recompute equals the "
        f"applied ratings exactly: {same}"
    )
    if not args.keep:
        drop_database()


def main() -> None:
    """Run the part asked for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["updates", "recompute"])
    parser.add_argument("--rounds", type=int, default=7, help="updates: rounds per contender")
    parser.add_argument("--tables", type=int, default=2000, help="updates: tables per round")
    parser.add_argument("--matches", type=int, default=None)
    parser.add_argument("--bots", type=int, default=None)
    parser.add_argument("--profile", action="store_true", help="recompute: cProfile it")
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    args = parser.parse_args()
    if args.part == "updates":
        bench_updates(args)
    elif args.part == "recompute":
        args.matches = args.matches or 100_000
        args.bots = args.bots or 1_000
        bench_recompute(args)


if __name__ == "__main__":
    main()
