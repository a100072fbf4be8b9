"""Heavy reads: the tournament's matches CSV and a match page with a long replay.

Builds a tournament of 2,000 four-seat matches and a finished match whose replay has 1,000
deals in a fresh PostgreSQL database, then, in one process through Django's test client, times
(median of --rounds) and weighs: the CSV download as it is now (streamed) and as it was (the
serializer-based renderer, run in the same process as the anchor), the match page, the replay
it fetches (plain and gzip) and GET /api/health/.

    .venv/bin/python -m bench.bench_reads [--rounds 5]

Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth); uses the database
ohhell_bench_reads.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from bench.support.processes import ROOT

DB_URL = "postgres://postgres@127.0.0.1:5432/ohhell_bench_reads"
MATCHES = 2000
DEALS = 1000


def prepare_database() -> None:
    name = DB_URL.rsplit("/", 1)[1]
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c"]
    subprocess.run([*psql, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True)
    subprocess.run([*psql, f"CREATE DATABASE {name}"], check=True)
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"], check=True)


def timed(call: Callable[[], bytes], rounds: int) -> tuple[float, int]:
    """Median seconds of ``rounds`` calls, and the bytes of the last."""
    seconds = []
    size = 0
    for _ in range(rounds):
        start = time.perf_counter()
        size = len(call())
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ.update(
        DATABASE_URL=DB_URL,
        DEBUG="0",
        SECRET_KEY="bench-only-secret-key-" + "x" * 30,
        ALLOWED_HOSTS="testserver",
        CELERY_EAGER="1",
        THROTTLE_DOWNLOAD_RATE="100000/minute",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    os.environ.pop("REDIS_URL", None)
    prepare_database()
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.test import Client
    from django.utils.html import json_script

    from tests.support.world import make_bots, play_and_record, queue_match
    from tournaments.api.csv_export import CSVRenderer
    from tournaments.api.serializers.matches import MatchOutput
    from tournaments.models import Match, MatchSeat, Replay, Tournament, Variant
    from tournaments.selectors.matches import tournament_fixtures

    owner = User.objects.create_user(username="bench", password="bench-only-passphrase-42")
    bots = make_bots(40, [owner])
    variant = Variant.objects.get(name="oh-hell")
    tournament = Tournament.objects.create(
        name="Big", organiser=owner, variant=variant, format="round_robin", table_size=4
    )
    made = Match.objects.bulk_create(
        Match(tournament=tournament, variant=variant, round=i // 10, seed=i) for i in range(MATCHES)
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=m, seat=j, bot=bots[(i + 7 * j) % len(bots)])
        for i, m in enumerate(made)
        for j in range(4)
    )
    long = queue_match(tournament, bots[:4], round_=999)
    play_and_record(long)
    replay = Replay.objects.get(match=long)
    deals = replay.data["deals"]
    replay.data = {**replay.data, "deals": (deals * (DEALS // len(deals) + 1))[:DEALS]}
    replay.save(update_fields=["data"])

    client = Client()
    fixtures = f"/api/tournaments/{tournament.pk}/fixtures/?download=csv"

    def csv_now() -> bytes:
        return b"".join(client.get(fixtures))

    def csv_before() -> bytes:
        rows = MatchOutput(tournament_fixtures(tournament=tournament), many=True).data
        return CSVRenderer().render(rows)

    assert csv_now() == csv_before(), "the streamed CSV differs from the renderer's"
    page = f"/matches/{long.pk}/"
    replay_url = f"/api/matches/{long.pk}/replay/"
    embedded = len(json_script(replay.data, "replay-data").encode())
    rows = [
        ("CSV of 2,000 matches, streamed (now)", csv_now),
        ("CSV of 2,000 matches, renderer (before)", csv_before),
        ("match page, 1,000-deal replay", lambda: client.get(page).content),
        ("replay JSON", lambda: client.get(replay_url).content),
        ("replay JSON, gzip", lambda: client.get(replay_url, HTTP_ACCEPT_ENCODING="gzip").content),
        ("GET /api/health/ (anchor)", lambda: client.get("/api/health/").content),
    ]
    print("| request | median ms | bytes |")
    print("| --- | ---: | ---: |")
    for name, call in rows:
        seconds, size = timed(call, args.rounds)
        print(f"| {name} | {seconds * 1000:.0f} | {size:,} |")
    print(f"\nThe replay as the page embedded it before (json_script): {embedded:,} bytes more.")


if __name__ == "__main__":
    main()
