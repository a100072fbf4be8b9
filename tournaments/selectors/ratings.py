"""Reads about ratings: leaderboards, a bot's history, ratings on a date, recompute progress."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.db.models import F, Max, QuerySet

from tournaments.cache_keys import recompute_progress_key
from tournaments.maths.ratings import conservative
from tournaments.models import (
    Bot,
    Rating,
    RatingHistory,
    RatingRecompute,
    RecomputeStatus,
    Variant,
)
from tournaments.provisional import provisional_matches
from tournaments.selectors.pages import Pages


def leaderboard(*, variant: Variant, include_provisional: bool = True) -> QuerySet[Rating]:
    """Ratings of one variant by conservative rating (mu - 3 sigma), best first.

    Equal ratings go by bot id (the earlier registered first), so the order is exactly the
    index ``rating_leaderboard_idx`` (variant, -conservative, bot): any page is read from it.
    """
    ratings = Rating.objects.filter(variant=variant).select_related("bot", "bot__owner")
    if not include_provisional:
        ratings = ratings.filter(matches__gte=provisional_matches())
    return ratings.order_by("-conservative", "bot_id")


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """What a leaderboard page shows of a rating, with its place, bot and owner."""

    rank: int
    bot_id: int
    bot_name: str
    version: int
    owner: str
    mu: float
    sigma: float
    conservative: float
    matches: int
    updated_at: datetime


def leaderboard_pages(
    *, variant_id: int, include_provisional: bool = True
) -> Pages[LeaderboardRow]:
    """The board of ``leaderboard`` as plain rows, a page at a time (for the API).

    Two statements of SQL, as the ORM's compiling and row building cost several times what
    the database does: the count, and one page (its bot ids an index-only scan of
    ``rating_leaderboard_idx`` at any depth, then only those ratings with bot and owner).
    """
    rating, bot, user = (m._meta.db_table for m in (Rating, Bot, get_user_model()))
    shown = "variant_id = %s"
    params: list[int | datetime] = [variant_id]
    if not include_provisional:
        shown += " AND matches >= %s"
        params.append(provisional_matches())
    # The order of leaderboard() above: best conservative rating first, then the earlier bot.
    page = f"""
        SELECT r.bot_id, b.name AS bot_name, b.version, u.username AS owner, r.mu, r.sigma,
               r.conservative, r.matches, r.updated_at
        FROM {rating} r JOIN {bot} b ON b.id = r.bot_id JOIN {user} u ON u.id = b.owner_id
        WHERE r.bot_id IN (
            SELECT bot_id FROM {rating} WHERE {shown}
            ORDER BY conservative DESC, bot_id LIMIT %s OFFSET %s
        ) AND r.variant_id = %s
        ORDER BY r.conservative DESC, r.bot_id
    """

    def count() -> int:
        (total,) = _read(f"SELECT count(*) AS total FROM {rating} WHERE {shown}", params)
        return int(total["total"])

    def read(start: int, stop: int) -> list[LeaderboardRow]:
        rows = _read(page, [*params, stop - start, start, variant_id])
        return [LeaderboardRow(rank=rank, **row) for rank, row in enumerate(rows, start=start + 1)]

    return Pages(count=count, read=read)


def _read(sql: str, params: Sequence[int | datetime]) -> list[dict[str, Any]]:
    """The rows of a query, each by the names of its columns."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        # DB-API: each column's description is a sequence whose first item is the name.
        names = [column[0] for column in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def leaderboard_generation(*, variant_id: int) -> str:
    """A value that changes whenever any rating of the variant is written (an index look-up)."""
    latest = Rating.objects.filter(variant_id=variant_id).aggregate(last=Max("updated_at"))["last"]
    return latest.isoformat() if latest is not None else "empty"


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One update of a bot's rating as its history shows it."""

    match_id: int | None
    version: int | None
    variant_name: str
    sequence: int
    at: datetime
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float


def rating_history(
    *, bot_id: int, variant_id: int | None = None, until: datetime | None = None
) -> Pages[HistoryRow]:
    """Every update of a bot's rating (up to ``until`` when given), oldest first, a page at a
    time (for the API).

    Two statements of SQL: the count, an index-only count of ``history_bot_at_idx``, and a
    page, an index-only scan of ``history_bot_page_idx`` joined to the variant for its name.
    """
    history, variants = RatingHistory._meta.db_table, Variant._meta.db_table
    shown = "h.bot_id = %s"
    params: list[int | datetime] = [bot_id]
    if variant_id is not None:
        shown += " AND h.variant_id = %s"
        params.append(variant_id)
    if until is not None:
        shown += " AND h.at <= %s"
        params.append(until)
    page = f"""
        SELECT h.match_id, h.version, v.name AS variant_name, h.sequence, h.at, h.mu_before,
               h.sigma_before, h.mu_after, h.sigma_after
        FROM {history} h JOIN {variants} v ON v.id = h.variant_id
        WHERE {shown}
        ORDER BY h.variant_id, h.sequence LIMIT %s OFFSET %s
    """

    def count() -> int:
        (total,) = _read(f"SELECT count(*) AS total FROM {history} h WHERE {shown}", params)
        return int(total["total"])

    def read(start: int, stop: int) -> list[HistoryRow]:
        return [HistoryRow(**row) for row in _read(page, [*params, stop - start, start])]

    return Pages(count=count, read=read)


def bot_ratings(*, bot_id: int) -> QuerySet[Rating]:
    """A bot's current rating in every variant it has played, by variant name."""
    return Rating.objects.filter(bot_id=bot_id).select_related("variant").order_by("variant__name")


@dataclass(frozen=True, slots=True)
class BotRating:
    """A bot's rating in one variant: now, or as it stood on a date after a match."""

    variant_name: str
    mu: float
    sigma: float
    conservative: float
    matches: int
    as_of: datetime
    # The match of the update the rating stood at (on a date only; None on a version's row).
    match_id: int | None = None


def bot_ratings_now(*, bot_id: int) -> list[BotRating]:
    """The ``bot_ratings`` as plain rows, in one query (for the API)."""
    rows = bot_ratings(bot_id=bot_id).values(
        *("mu", "sigma", "conservative", "matches"),
        variant_name=F("variant__name"),
        as_of=F("updated_at"),
    )
    return [BotRating(**row) for row in rows]


def bot_ratings_on(*, bot_id: int, when: datetime) -> list[BotRating]:
    """A bot's rating in every variant as it stood at ``when``, by variant name, in one query.

    Each variant's last update up to then and how many of the updates up to then were
    matches (an index-only scan of the bot's entries in ``history_bot_page_idx``), then those
    updates by sequence.
    """
    history, variants = RatingHistory._meta.db_table, Variant._meta.db_table
    rows = _read(
        f"""
        WITH latest AS (
            SELECT variant_id, max(sequence) AS last, count(match_id) AS matches
            FROM {history} WHERE bot_id = %s AND at <= %s GROUP BY variant_id
        )
        SELECT v.name AS variant_name, h.mu_after AS mu, h.sigma_after AS sigma,
               latest.matches, h.at AS as_of, h.match_id
        FROM latest
        JOIN {history} h
            ON h.bot_id = %s AND h.variant_id = latest.variant_id AND h.sequence = latest.last
        JOIN {variants} v ON v.id = latest.variant_id
        """,
        [bot_id, when, bot_id],
    )
    return sorted(
        (BotRating(conservative=conservative(row["mu"], row["sigma"]), **row) for row in rows),
        key=lambda rating: rating.variant_name,
    )


def rating_on(*, bot_id: int, variant: Variant, when: datetime) -> dict[str, Any] | None:
    """A bot's rating in a variant as it stood at ``when`` (None before its first match)."""
    row = (
        RatingHistory.objects.filter(bot_id=bot_id, variant=variant, at__lte=when)
        .order_by("-sequence")
        .first()
    )
    if row is None:
        return None
    return {"mu": row.mu_after, "sigma": row.sigma_after, "at": row.at, "match": row.match_id}


def recompute_state(*, job: RatingRecompute) -> dict[str, Any]:
    """A recompute job with live progress while it runs."""
    done, total = job.done, job.total
    if job.status == RecomputeStatus.RUNNING:
        done, total = cache.get(recompute_progress_key(job.pk), [done, total])
    return {
        "id": job.pk,
        "status": job.status,
        "done": done,
        "total": total,
        "percent": round(100.0 * done / total, 1) if total else 0.0,
        "error": job.error,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "attempts": job.attempts,
        "heartbeat_at": job.heartbeat_at,
    }
