"""A top-up and a rating write never deadlock (PostgreSQL row locks, two connections).

A rating write rewrites the share weights of the bots it rated (tournaments/services/shares.py)
and, at commit, checks that the variant of its new rows exists (a key-share lock on the
variant's row); a top-up holds the running ladders' rows while it waits for those shares. So a
top-up must not lock the variants' rows: a rating write's commit would wait for the top-up,
which waits for the rating write.
"""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import connection, transaction

from tests.support.workers import database_url
from tournaments.models import Variant
from tournaments.services.ladders import lock_running_ladders

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's row locks"),
]

# Generous bounds for a loaded machine: each step takes milliseconds when nothing is stuck.
WITHIN_S = 30


def test_a_rating_write_commits_while_a_top_up_holds_the_ladders(ladder) -> None:
    held, release = threading.Event(), threading.Event()
    errors: list[Exception] = []

    def top_up_side() -> None:
        try:
            with transaction.atomic():
                assert [each.pk for each in lock_running_ladders()] == [ladder.pk]
                held.set()
                assert release.wait(WITHIN_S)
        except Exception as exc:  # reported by the test, not lost on the thread
            errors.append(exc)
        finally:
            connection.close()

    side = threading.Thread(target=top_up_side, daemon=True)
    side.start()
    try:
        assert held.wait(WITHIN_S)
        with psycopg.connect(database_url()) as writer:
            # What a rating write's commit does for each new row of the variant.
            writer.execute("SET lock_timeout = '10s'")
            found = writer.execute(
                f"SELECT 1 FROM {Variant._meta.db_table} WHERE id = %s FOR KEY SHARE",
                [ladder.variant_id],
            ).fetchall()
            assert found == [(1,)]
    finally:
        release.set()
        side.join(WITHIN_S)
    assert not side.is_alive() and not errors
