"""Throughput, latency and query count of the leaderboard and rating endpoints at scale.

Loads 10,000 bots and 1,000,000 rated matches of 4 seats (4,000,000 seats, 4,000,000 rating
history rows, 10,000 ratings) into a PostgreSQL database of its own with COPY, then serves it
with gunicorn (2 workers, pooled database connections, the default) on loopback and drives, one
after the other:

- GET /api/leaderboard/?variant=oh-hell, the first page and a deep page (page_size 50);
- GET /api/bots/{id}/rating-history/?variant=oh-hell, the first page, a random bot a request
  (of all, and of the 100 first by id: the pages read most, as bots followed are);
- GET /api/bots/{id}/ratings/?at=<a date>, a random bot a request;

with the keep-alive load generator of ``bench_api.py``, each in paired rounds against the
anchor GET /api/health/ on the same server (``bench_api.paired``: medians and the spread of
the endpoint/anchor ratio), the leaderboard with its page cache on and off. Also counts SQL
queries per request in-process (Django test client, same database) at two page sizes, and
``--explain`` prints EXPLAIN ANALYZE of every query each endpoint runs. ``--cpu`` instead
measures the CPU time a request costs in-process (the test client: no network, no server),
each endpoint paired with the anchor, every leaderboard page read from the database.

    .venv/bin/python -m bench.bench_api_ratings [--seconds 3] [--rounds 5] [--connections 4]
        [--keep] [--bots 10000] [--matches 1000000] [--explain] [--only ratings]
        [--cpu [--requests 200]] [--writes 4 --redis redis://127.0.0.1:6379/0]

``--writes N`` instead measures with ratings written N times a second throughout (a process
of its own records a finished match of four random bots and rates it, each write dropping the
variant's generation as a worker's does), gunicorn and the writer sharing the Redis cache of
``--redis``: the leaderboard's first page and a bot's rating history, each paired with the
anchor as above, once with ``LEADERBOARD_STALE_SECONDS=0`` (every write replaces the pages)
and once with the default.

Loading takes a few minutes; the data is kept with ``--keep`` and a later run reuses it when
the database already holds the same amounts (it is migrated first, so a new index applies).
Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth); uses the database
ohhell_bench_api_ratings and drops it at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

DB_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ohhell_bench_api_ratings"
)
# The helpers below read their database from this variable when imported.
os.environ["BENCH_DATABASE_URL"] = DB_URL

from bench import bench_api  # noqa: E402
from bench import bench_ratings_speed as speed  # noqa: E402
from engine.scoring import shared_ranks  # noqa: E402

DB_NAME = DB_URL.rsplit("/", 1)[1]
PORT = 8766
VARIANT = "oh-hell"
START = datetime(2024, 1, 1, tzinfo=UTC)
YEAR = timedelta(days=365)
AT = "2024-07-01T00:00:00Z"
CHUNK = 50_000
# Plausible TrueSkill-like drift: defaults of the oh-hell variant.
MU0, SIGMA0, BETA, TAU = 25.0, 25.0 / 3, 25.0 / 6, 25.0 / 300

MATCH_COLUMNS = [
    *("id", "variant_id", "seed", "started_at", "finished_at", "created_at", "updated_at"),
    *("rated_at", "rating_sequence", "rated", "status", "round", "duplicate_group"),
    *("time_limit_ms", "attempts", "max_attempts", "claimed_by", "error", "rating_group"),
    *("unsent", "time_bank_ms", "table_round"),
]
MATCH_FIXED = (True, "finished", 0, "", 1000, 1, 3, "", "", "", False, 0, "")
HISTORY_COLUMNS = [
    *("bot_id", "variant_id", "match_id", "sequence"),
    *("mu_before", "sigma_before", "mu_after", "sigma_after", "at"),
]
RATING_COLUMNS = ["bot_id", "variant_id", "mu", "sigma", "matches", "updated_at"]


# --- the data --------------------------------------------------------------------------------


def _psql_value(sql: str, database: str = "postgres") -> str:
    result = subprocess.run(
        [*speed.PSQL, "-d", database, "-tAc", sql], check=False, capture_output=True, text=True
    )
    return result.stdout.strip()


def _holds_data(bots: int, matches: int) -> bool:
    """Whether the bench database exists and holds exactly this load."""
    if _psql_value(f"SELECT 1 FROM pg_database WHERE datname = '{DB_NAME}'") != "1":
        return False
    counts = _psql_value(
        "SELECT (SELECT count(*) FROM tournaments_bot), (SELECT count(*) FROM tournaments_match),"
        " (SELECT count(*) FROM tournaments_ratinghistory),"
        " (SELECT count(*) FROM tournaments_rating)",
        DB_NAME,
    )
    return counts == f"{bots}|{matches}|{4 * matches}|{bots}"


def _update(table: list[list[float]], ranks: list[int]) -> list[tuple[float, float]]:
    """A cheap TrueSkill-like update: mu moves by surprise, sigma shrinks towards ~0.7."""
    seats = len(table)
    out = []
    for i, (mu, sigma, _) in enumerate(table):
        var = sigma * sigma + TAU * TAU
        expected = 0.0
        for j, (mu_j, sigma_j, _) in enumerate(table):
            if j != i:
                c = math.sqrt(2 * BETA * BETA + var + sigma_j * sigma_j)
                expected += 1.0 / (1.0 + math.exp(-(mu - mu_j) / c * 1.7))
        actual = sum(
            1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
            for j in range(seats)
            if j != i
        )
        c = 2 * BETA * BETA
        mu_after = mu + var / math.sqrt(var + c) * (actual - expected) * 2 / (seats - 1)
        sigma_after = math.sqrt(var * (1 - var / (var + c)))
        out.append((mu_after, sigma_after))
    return out


def load(bots: int, matches: int, seed: int = 1) -> None:
    """Recreate the database and load bots, rated matches, seats, history and ratings."""
    speed.create_database()
    from django.db import connection

    from tournaments.models import Match, MatchSeat, Rating, RatingHistory

    started = time.perf_counter()
    bot_ids, variant_id = speed.create_bots(bots)
    rng = random.Random(seed)
    strength = {b: rng.gauss(0, 15) for b in bot_ids}
    state = {b: [MU0, SIGMA0, 0] for b in bot_ids}  # mu, sigma, matches
    last_at = {}
    step = YEAR / matches
    connection.ensure_connection()
    with connection.cursor() as cursor:
        # The rows are consistent by construction: skip the foreign key triggers.
        cursor.execute("SET session_replication_role = replica")
    for first in range(1, matches + 1, CHUNK):
        match_rows, seat_rows, history_rows = [], [], []
        for match_id in range(first, min(first + CHUNK, matches + 1)):
            finished = START + step * match_id + timedelta(microseconds=rng.randrange(1000))
            began = finished - timedelta(seconds=rng.randrange(60, 600))
            seed = rng.getrandbits(62)
            times = (began, finished, began, finished, finished)
            match_rows.append((match_id, variant_id, seed, *times, match_id, *MATCH_FIXED))
            seated = rng.sample(bot_ids, 4)
            scores = [max(0, round(100 + strength[b] + rng.gauss(0, 21))) for b in seated]
            ranks = shared_ranks(scores)
            table = [state[b] for b in seated]
            after = _update(table, ranks)
            for seat, bot in enumerate(seated):
                exact = rng.randrange(4, 15)
                seat_rows.append(
                    (
                        match_id,
                        seat,
                        bot,
                        scores[seat],
                        ranks[seat],
                        exact,
                        19,
                        0,
                        False,
                        False,
                        False,
                    )
                )
                mu, sigma, played = state[bot]
                mu_after, sigma_after = after[seat]
                history_rows.append(
                    (
                        bot,
                        variant_id,
                        match_id,
                        match_id,
                        mu,
                        sigma,
                        mu_after,
                        sigma_after,
                        finished,
                    )
                )
                state[bot] = [*after[seat], played + 1]
                last_at[bot] = finished
        speed.copy_rows(Match, MATCH_COLUMNS, match_rows)
        speed.copy_rows(MatchSeat, speed.SEAT_COLUMNS, seat_rows)
        speed.copy_rows(RatingHistory, HISTORY_COLUMNS, history_rows)
        done = first + len(match_rows) - 1
        print(f"  {done:,} matches loaded, {time.perf_counter() - started:.0f} s", flush=True)
    speed.copy_rows(
        Rating,
        RATING_COLUMNS,
        (
            (b, variant_id, mu, sigma, played, last_at.get(b, START))
            for b, (mu, sigma, played) in state.items()
        ),
    )
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = DEFAULT")
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('tournaments_match', 'id'), %s)", [matches]
        )
    connection.close()
    subprocess.run([*speed.PSQL, "-d", DB_NAME, "-c", "VACUUM ANALYZE"], check=True)
    print(f"loaded in {time.perf_counter() - started:.0f} s (with VACUUM ANALYZE)")


def prepare(bots: int, matches: int) -> None:
    """Reuse the database when it holds this load (migrating it); load it otherwise."""
    if _holds_data(bots, matches):
        speed.setup_django()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        subprocess.run([*speed.PSQL, "-d", DB_NAME, "-c", "ANALYZE"], check=True)
        print(f"reusing {DB_NAME}: {bots:,} bots, {matches:,} rated matches")
    else:
        print(f"loading {bots:,} bots and {matches:,} rated matches of 4 seats into {DB_NAME}")
        load(bots, matches)


# --- the measurements ------------------------------------------------------------------------


def _bot_ids() -> list[int]:
    from tournaments.models import Bot

    return list(Bot.objects.values_list("pk", flat=True))


# The bots whose pages are read most (followed by their owners and on the dashboard), for the
# rating history's second arm: each request one of these, the first by id.
HOT_BOTS = 100

# Makes a request path, given a random source and a page size.
PathMaker = Callable[[random.Random, int], str]


def endpoints(bot_ids: list[int], bots: int) -> dict[str, PathMaker]:
    """Label -> path maker (given a random source and a page size)."""
    deep = max(1, bots // 2 // 50)  # the middle of the board at page_size 50
    return {
        "leaderboard, page 1": lambda r, s: f"/api/leaderboard/?variant={VARIANT}&page_size={s}",
        f"leaderboard, page {deep}": lambda r, s: (
            f"/api/leaderboard/?variant={VARIANT}&page_size={s}&page={max(1, deep * 50 // s)}"
        ),
        "rating-history, page 1": lambda r, s: (
            f"/api/bots/{r.choice(bot_ids)}/rating-history/?variant={VARIANT}&page_size={s}"
        ),
        f"rating-history, page 1, {HOT_BOTS} bots": lambda r, s: (
            f"/api/bots/{r.choice(bot_ids[:HOT_BOTS])}/rating-history/"
            f"?variant={VARIANT}&page_size={s}"
        ),
        "ratings ?at=": lambda r, s: f"/api/bots/{r.choice(bot_ids)}/ratings/?at={AT}",
    }


def count_queries(paths: dict[str, PathMaker], explain: bool) -> dict[str, list[int]]:
    """SQL queries per request at page sizes 10 and 200 (in-process, the test client)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client, rng = Client(HTTP_HOST="127.0.0.1"), random.Random(7)
    out: dict[str, list[int]] = {}
    for label, make in paths.items():
        out[label] = []
        for size in (10, 200):
            path = make(rng, size)
            with CaptureQueriesContext(connection) as queries:
                response = client.get(path)
            assert response.status_code == 200, (path, response.status_code, response.content)
            out[label].append(len(queries))
            if explain and size == 10:
                print(f"\n--- {path}")
                with connection.cursor() as cursor:
                    for query in queries.captured_queries:
                        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + query["sql"])
                        print("\n".join(row[0] for row in cursor.fetchall()) + "\n")
    return out


def cpu_per_request(paths: dict[str, PathMaker], rounds: int, requests: int) -> None:
    """CPU time of the serving process per request, in-process (the Django test client, no
    network, no gunicorn): each endpoint against the anchor in paired rounds (ABBA order),
    every leaderboard page read from the database (a bot's history pages are cached in this
    process's memory: the 100 bots' arm reads them from there). Prints medians and the
    ratio's spread.
    """
    import statistics

    from django.test import Client, override_settings

    client, rng = Client(HTTP_HOST="127.0.0.1"), random.Random(11)

    def per_request(make: Callable[[], str]) -> float:
        started = time.process_time()
        for _ in range(requests):
            response = client.get(make())
            assert response.status_code == 200, response.content
        return (time.process_time() - started) / requests * 1000

    print(
        f"\nCPU ms per request in-process, {rounds} paired rounds of {requests} requests"
        f" against {bench_api.ANCHOR} (ABBA order), no leaderboard page cache; page_size 50"
    )
    print("| endpoint | anchor CPU ms | endpoint CPU ms | ratio (median) | ratio min-max |")
    print("|---|---|---|---|---|")
    with override_settings(LEADERBOARD_CACHE_SECONDS=0):
        for label, make in paths.items():

            def anchor() -> str:
                return bench_api.ANCHOR

            def endpoint(make: Callable = make) -> str:
                return make(rng, 50)

            per_request(anchor), per_request(endpoint)  # warm-up of both
            pairs = []
            for r in range(rounds):
                order = [anchor, endpoint] if r % 2 == 0 else [endpoint, anchor]
                times = {f: per_request(f) for f in order}
                pairs.append((times[anchor], times[endpoint]))
            ratios = [a / e for a, e in pairs]  # as throughput: anchor time / endpoint time
            print(
                f"| {label} | {statistics.median(a for a, _ in pairs):.2f} |"
                f" {statistics.median(e for _, e in pairs):.2f} | {statistics.median(ratios):.3f}x"
                f" | {min(ratios):.3f}-{max(ratios):.3f} |",
                flush=True,
            )


def write_loop(per_second: float, redis_url: str) -> None:
    """Record and rate a finished match of four random bots ``per_second`` times a second
    until killed (run as a process of its own: ``--write-loop``)."""
    os.environ.update(speed.BASE_ENV)
    os.environ["REDIS_URL"] = redis_url
    import django

    django.setup()
    from django.db import transaction
    from django.utils import timezone

    from tournaments.models import Bot, Match, MatchSeat, MatchStatus, Variant
    from tournaments.services.ratings import ratings_apply_pending

    rng = random.Random(3)
    bot_ids = list(Bot.objects.values_list("pk", flat=True))
    variant = Variant.objects.get(name=VARIANT)
    interval = 1 / per_second
    due = time.monotonic()
    while True:
        with transaction.atomic():
            match = Match.objects.create(
                variant=variant, status=MatchStatus.FINISHED, finished_at=timezone.now()
            )
            MatchSeat.objects.bulk_create(
                MatchSeat(match=match, seat=seat, bot_id=bot, score=rng.randrange(100))
                for seat, bot in enumerate(rng.sample(bot_ids, 4))
            )
        ratings_apply_pending()
        due += interval
        time.sleep(max(0.0, due - time.monotonic()))


def measure_with_writes(paths: dict[str, PathMaker], args: argparse.Namespace) -> None:
    """Leaderboard page 1 and rating history against the anchor while ratings are written."""
    import sys

    from django.db import connections

    from tournaments.models import Match

    connections.close_all()
    bench_api.PORT = PORT
    wanted = (
        "leaderboard, page 1",
        "rating-history, page 1",
        f"rating-history, page 1, {HOT_BOTS} bots",
    )
    chosen = {k: v for k, v in paths.items() if k in wanted}
    print(
        f"\ngunicorn, 2 gthread workers x 4 threads, pooled connections, cache in Redis;"
        f" {args.connections} keep-alive connections; {args.rounds} paired rounds of"
        f" {args.seconds:.0f} s against {bench_api.ANCHOR} (ABBA order); page_size 50;"
        f" ratings written {args.writes:g} times a second throughout"
    )
    for stale in ("0", "2"):
        print(f"\nLEADERBOARD_STALE_SECONDS={stale}\n{bench_api.PAIRED_HEADER}")
        env = {"REDIS_URL": args.redis, "LEADERBOARD_STALE_SECONDS": stale}
        server = bench_api.start_gunicorn({}, env)
        before = Match.objects.count()
        started = time.monotonic()
        writer = subprocess.Popen(
            [
                *(sys.executable, __file__),
                *("--write-loop", str(args.writes), "--redis", args.redis),
            ]
        )
        try:
            for label, make in chosen.items():
                result = bench_api.paired(
                    at_page_size(make, 50), args.rounds, args.seconds, args.connections
                )
                print(result.row(label), flush=True)
        finally:
            writer.terminate()
            writer.wait(timeout=10)
            server.terminate()
            server.wait(timeout=10)
        written = Match.objects.count() - before
        print(f"ratings written: {written} in {time.monotonic() - started:.0f} s")
        connections.close_all()
    print(f"\nload average (1, 5, 15 min) after the run: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds per endpoint")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--bots", type=int, default=10_000)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE every query")
    parser.add_argument("--only", default="", help="only endpoints whose label contains this")
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    parser.add_argument(
        "--cpu", action="store_true", help="only CPU per request in-process, no server"
    )
    parser.add_argument("--requests", type=int, default=200, help="per round, with --cpu")
    parser.add_argument("--writes", type=float, default=0, help="rating writes a second")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="with --writes")
    parser.add_argument("--write-loop", type=float, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_loop:
        write_loop(args.write_loop, args.redis)
        return

    prepare(args.bots, args.matches)
    speed.setup_django()
    paths = {k: v for k, v in endpoints(_bot_ids(), args.bots).items() if args.only in k}
    print("\nSQL queries per request (page_size 10 / 200; a first request: no cached page):")
    for label, counts in count_queries(paths, args.explain).items():
        print(f"  {label:26} " + " / ".join(map(str, counts)))
    if args.cpu:
        cpu_per_request(paths, args.rounds, args.requests)
    elif args.writes:
        measure_with_writes(paths, args)
    else:
        serve_and_measure(paths, args)
    if not args.keep:
        speed.drop_database()


def at_page_size(make: PathMaker, size: int) -> Callable[[random.Random], str]:
    """The paths of ``make`` at one page size."""
    return lambda r: make(r, size)


def serve_and_measure(paths: dict[str, PathMaker], args: argparse.Namespace) -> None:
    """Throughput and latency through gunicorn, each endpoint paired with the anchor."""
    from django.db import connections

    connections.close_all()

    bench_api.PORT = PORT
    print(
        f"\ngunicorn, 2 gthread workers x 4 threads, pooled connections; {args.connections}"
        f" keep-alive connections; {args.rounds} paired rounds of {args.seconds:.0f} s each"
        f" against {bench_api.ANCHOR} (ABBA order); page_size 50"
    )
    # The leaderboard's pages are cached per gunicorn worker here (no REDIS_URL): once with the
    # cache (the default), once without it, which is what a page costs after each rating write.
    for cache_seconds in ("60", "0"):
        print(f"\nLEADERBOARD_CACHE_SECONDS={cache_seconds}\n{bench_api.PAIRED_HEADER}")
        server = bench_api.start_gunicorn({}, {"LEADERBOARD_CACHE_SECONDS": cache_seconds})
        try:
            for label, make in paths.items():
                if cache_seconds == "0" and "leaderboard" not in label:
                    continue
                result = bench_api.paired(
                    at_page_size(make, 50), args.rounds, args.seconds, args.connections
                )
                print(result.row(label), flush=True)
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"\nload average (1, 5, 15 min) after the run: {os.getloadavg()}")


if __name__ == "__main__":
    main()
