"""A ladder top-up reads neither the ladder's history nor the window's tables (only the first
one counts those, tournaments/services/shares.py): the rows it reads from the match and seat
tables stay the same however many older matches are stored, and however busy the day was; and
its slate reads about as many shares and bots as it holds, however large the field."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.utils import timezone

from tests.support.users import make_confirmed_user
from tournaments.models import Bot, Ladder, LadderShare, Match, MatchSeat
from tournaments.selectors.ladders import SHARE_WINDOW_STEP, ladder_slate
from tournaments.services.ladders import ladder_ensure_default, ladders_top_up
from tournaments.services.shares import shares_move_window, shares_rebuild

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="reads the statistics of PostgreSQL"
)

# The rows the current transaction has read from the match and seat tables so far.
READS_SQL = f"""
    SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0)
    FROM pg_stat_xact_user_tables
    WHERE relname IN ('{Match._meta.db_table}', '{MatchSeat._meta.db_table}')
"""


def rows_read() -> int:
    with connection.cursor() as cursor:
        cursor.execute(READS_SQL)
        (count,) = cursor.fetchone()
    return int(count)


def top_up_reads() -> int:
    """The match and seat rows one top-up reads; the tables it made are rolled back."""
    with transaction.atomic():
        before = rows_read()
        assert ladders_top_up() >= 1
        read = rows_read() - before
        transaction.set_rollback(True)
    return read


def store_history(ladder: Ladder, bots: list[Bot], matches: int, *, days_ago: int) -> None:
    """Insert finished ladder matches of four seats created ``days_ago`` days back, with SQL."""
    ids = [bot.pk for bot in bots]
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {Match._meta.db_table} (
                ladder_id, variant_id, round, duplicate_group, seed, time_limit_ms, status,
                attempts, max_attempts, claimed_by, error, started_at, finished_at, rated,
                rating_group, created_at, updated_at, unsent, time_bank_ms, table_round)
            SELECT %s, %s, 0, '', g, 1000, 'finished', 1, 3, '', '', t, t, false, '', t, t, false,
                0, ''
            FROM generate_series(1, %s) AS g,
                LATERAL (SELECT now() - %s * interval '1 day' - g * interval '1 second') AS x(t)
            RETURNING id
            """,
            [ladder.pk, ladder.variant_id, matches, days_ago],
        )
        match_ids = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            f"""
            INSERT INTO {MatchSeat._meta.db_table} (
                match_id, seat, bot_id, score, bids_exact, bids_total, faults, disqualified,
                refused_every_request, refusal_counted)
            SELECT m, s, (%s::bigint[])[1 + (m + s) %% %s], 10, 0, 0, 0, false, false, false
            FROM unnest(%s::bigint[]) AS m, generate_series(0, 3) AS s
            """,
            [ids, len(ids), match_ids],
        )
        cursor.execute(f"ANALYZE {Match._meta.db_table}, {MatchSeat._meta.db_table}")


@pytest.fixture
def busy_ladder(oh_hell, make_bot, settings) -> tuple[Ladder, list[Bot]]:
    """The default ladder, one table in flight, and 8 bots of their own owners opted in."""
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    ladder = ladder_ensure_default()
    assert ladder is not None
    bots = [
        make_bot(make_confirmed_user(f"p{i}"), status="active", ladder_opt_in=True)
        for i in range(8)
    ]
    return ladder, bots


@pytest.mark.django_db
def test_a_top_up_reads_the_same_rows_with_a_long_history(busy_ladder) -> None:
    ladder, bots = busy_ladder
    store_history(ladder, bots, 50, days_ago=0)  # the last day's tables, which count
    small = top_up_reads()
    store_history(ladder, bots, 20_000, days_ago=3)
    large = top_up_reads()
    assert small > 0
    # The same rows, give or take the planner's choices over a handful of index pages.
    assert large <= small + 50, (small, large)


@pytest.mark.django_db
def test_a_top_up_reads_the_same_rows_however_many_tables_the_day_has(busy_ladder) -> None:
    ladder, bots = busy_ladder
    store_history(ladder, bots, 50, days_ago=0)
    shares_rebuild(ladder, now=timezone.now())  # the ladder's first top-up counts them
    quiet = top_up_reads()
    store_history(ladder, bots, 20_000, days_ago=0)  # a busy day since
    busy = top_up_reads()
    assert busy <= quiet + 50, (quiet, busy)


SHARE_READS_SQL = f"""
    SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0)
    FROM pg_stat_xact_user_tables
    WHERE relname IN ('{LadderShare._meta.db_table}', '{Bot._meta.db_table}')
"""


def slate_reads(ladder: Ladder, size: int) -> int:
    """The share and bot rows one slate of ``size`` bots reads."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(SHARE_READS_SQL)
        (before,) = cursor.fetchone()
        assert len(ladder_slate(ladder=ladder, size=size)) == size
        cursor.execute(SHARE_READS_SQL)
        (after,) = cursor.fetchone()
    return int(after) - int(before)


@pytest.mark.django_db
def test_a_slate_reads_about_as_many_shares_and_bots_as_it_holds_however_large_the_field(
    busy_ladder, make_bot
) -> None:
    ladder, _ = busy_ladder
    ladders_top_up()  # counts the shares; 4 of the 8 bots are now at a table
    small = slate_reads(ladder, 4)
    owners = [make_confirmed_user(f"field-{i}") for i in range(150)]
    for owner in owners:
        for _ in range(2):
            make_bot(owner, status="active", ladder_opt_in=True)
    shares_rebuild(ladder, now=timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {LadderShare._meta.db_table}, {Bot._meta.db_table}")
    large = slate_reads(ladder, 4)
    assert small > 0
    # A field 38 times as large: the same rows, give or take a few index pages and the bots
    # of owners with two (their earlier bot is counted against the cap).
    assert large <= 2 * small + 20, (small, large)
    # 100 bots that cannot play, furthest behind of all: parked as the window moves, unread.
    gone = [make_bot(make_confirmed_user(f"gone-{i}"), status="active") for i in range(100)]
    LadderShare.objects.bulk_create(
        [LadderShare(ladder=ladder, bot=bot, weight=1000.0) for bot in gone]
    )
    ladder.refresh_from_db()
    ladder.shares_since -= SHARE_WINDOW_STEP
    with transaction.atomic():
        shares_move_window(ladder, now=timezone.now())
    assert LadderShare.objects.filter(ladder=ladder, parked=True).count() == 100
    assert slate_reads(ladder, 4) <= 2 * small + 20
