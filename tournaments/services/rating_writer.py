"""Writing rating updates back: one lock for every rating writer, the ratings and their history
rows in bulk, and the cached pages they make stale dropped once the writes commit."""

from __future__ import annotations

import logging

from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone

from tournaments.cache_keys import history_generation_key, leaderboard_generation_key
from tournaments.models import Rating, RatingHistory, Variant
from tournaments.services.rating_core import HISTORY_COLUMNS, HistoryRow, RatingState
from tournaments.services.rows import CHUNK, update_rows
from tournaments.services.shares import RatedBot, shares_reweigh

logger = logging.getLogger(__name__)
RATING_LOCK_KEY = 7_042_017  # any constant shared by every process of this deployment


def lock_ratings() -> None:
    """Serialise rating writers for the rest of the transaction."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [RATING_LOCK_KEY])


def save_history(rows: list[HistoryRow]) -> None:
    """Insert history rows: COPY on PostgreSQL (no model objects), bulk_create elsewhere."""
    if connection.vendor != "postgresql":
        RatingHistory.objects.bulk_create(
            [RatingHistory(**row._asdict()) for row in rows], batch_size=CHUNK
        )
        return
    sql = f"COPY {RatingHistory._meta.db_table} ({', '.join(HISTORY_COLUMNS)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.connection.cursor() as raw, raw.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)


def save_state(state: RatingState) -> None:
    """Write the in-memory ratings back (insert new pairs, update existing ones)."""
    existing = {
        (r.bot_id, r.variant_id): r
        for r in Rating.objects.filter(bot_id__in={b for b, _ in state.values})
    }
    now = timezone.now()
    new, changed = [], []
    for (bot_id, variant_id), value in state.values.items():
        row = existing.get((bot_id, variant_id))
        if row is None:
            new.append(
                Rating(
                    bot_id=bot_id,
                    variant_id=variant_id,
                    mu=value.mu,
                    sigma=value.sigma,
                    matches=value.matches,
                )
            )
        else:
            row.mu, row.sigma, row.matches, row.updated_at = (
                value.mu,
                value.sigma,
                value.matches,
                now,
            )
            changed.append(row)
    Rating.objects.bulk_create(new, batch_size=CHUNK)
    update_rows(Rating, changed, ["mu", "sigma", "matches", "updated_at"])
    shares_reweigh(
        RatedBot(bot_id, variant_id, value.sigma, value.matches)
        for (bot_id, variant_id), value in state.values.items()
    )


def forget_leaderboards(variant_ids: set[int]) -> None:
    """Once committed, drop the cached generations of these variants' leaderboards, so the
    next request reads the new ratings (every process, where the cache is shared)."""
    refs = Variant.objects.filter(pk__in=variant_ids).values_list("pk", "name")
    keys = [leaderboard_generation_key(str(ref)) for pair in refs for ref in pair]

    def forget() -> None:
        try:
            cache.delete_many(keys)
        except Exception:  # any backend's failure: the generations expire by themselves
            logger.warning("cache unavailable: leaderboard generations left to expire")

    transaction.on_commit(forget)


def forget_histories(bot_ids: set[int]) -> None:
    """Once committed, drop the cached generations of these bots' rating histories, so the
    next request reads the new rows (every process, where the cache is shared)."""
    keys = [history_generation_key(bot_id) for bot_id in bot_ids]

    def forget() -> None:
        try:
            cache.delete_many(keys)
        except Exception:  # any backend's failure: the generations expire by themselves
            logger.warning("cache unavailable: rating history generations left to expire")

    if keys:
        transaction.on_commit(forget)
