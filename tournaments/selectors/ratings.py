"""Reads about ratings: leaderboards, a bot's history, ratings on a date, recompute progress."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max, QuerySet

from tournaments.models import Rating, RatingHistory, RatingRecompute, RecomputeStatus, Variant
from tournaments.rating_math import conservative, is_provisional, provisional_matches
from tournaments.services.ratings import recompute_progress_key


def leaderboard(*, variant: Variant, include_provisional: bool = True) -> QuerySet[Rating]:
    """Ratings of one variant by conservative rating (mu - 3 sigma), best first.

    Equal ratings go by bot id (the earlier registered first), so the order is exactly the
    index ``rating_leaderboard_idx`` (variant, -conservative, bot): any page is read from it.
    """
    ratings = Rating.objects.filter(variant=variant).select_related("bot", "bot__owner")
    if not include_provisional:
        ratings = ratings.filter(matches__gte=provisional_matches())
    return ratings.order_by("-conservative", "bot_id")


# What a leaderboard row shows: no other column of the bot or its owner is read.
LEADERBOARD_COLUMNS = (
    *("bot_id", "variant_id", "mu", "sigma", "conservative", "matches", "updated_at"),
    *("bot__name", "bot__version", "bot__owner__username"),
)


def leaderboard_bot_ids(*, variant: Variant, include_provisional: bool = True) -> QuerySet:
    """The board as bot ids, in its order: a page of it is an index-only scan, however deep."""
    return (
        leaderboard(variant=variant, include_provisional=include_provisional)
        .select_related(None)
        .values_list("bot_id", flat=True)
    )


def leaderboard_rows(*, variant: Variant, bot_ids: list[int]) -> list[Rating]:
    """The variant's ratings of these bots, with bot and owner, in the order of ``bot_ids``."""
    rows = {
        r.bot_id: r
        for r in Rating.objects.filter(variant=variant, bot_id__in=bot_ids)
        .select_related("bot", "bot__owner")
        .only(*LEADERBOARD_COLUMNS)
        .order_by()
    }
    return [rows[bot_id] for bot_id in bot_ids]


def leaderboard_generation(*, variant: Variant) -> str:
    """A value that changes whenever any rating of the variant is written (an index look-up)."""
    latest = Rating.objects.filter(variant=variant).aggregate(last=Max("updated_at"))["last"]
    return latest.isoformat() if latest is not None else "empty"


# What a history row shows, all in the index history_bot_page_idx, and its variant's name.
HISTORY_COLUMNS = (
    *("bot_id", "variant_id", "match_id", "version", "sequence", "at"),
    *("mu_before", "sigma_before", "mu_after", "sigma_after", "variant__name"),
)


def rating_history(
    *, bot_id: int, variant: Variant | None = None, until: datetime | None = None
) -> QuerySet[RatingHistory]:
    """Every update of a bot's rating (up to ``until`` when given), oldest first.

    Reads only the columns of ``history_bot_page_idx`` and the variant's name: a page is an
    index-only scan, and no variant's options or parameters are decoded for every row.
    """
    rows = (
        RatingHistory.objects.filter(bot_id=bot_id).select_related("variant").only(*HISTORY_COLUMNS)
    )
    if variant is not None:
        rows = rows.filter(variant=variant)
    if until is not None:
        rows = rows.filter(at__lte=until)
    return rows.order_by("variant_id", "sequence")


def bot_ratings(*, bot_id: int) -> QuerySet[Rating]:
    """A bot's current rating in every variant it has played, by variant name."""
    return Rating.objects.filter(bot_id=bot_id).select_related("variant").order_by("variant__name")


def bot_ratings_on(*, bot_id: int, when: datetime) -> list[dict[str, Any]]:
    """A bot's rating in every variant as it stood at ``when``, in two queries.

    The first is an index-only scan of ``history_bot_at_idx`` (bot, at, variant, sequence).
    """
    latest = (
        RatingHistory.objects.filter(bot_id=bot_id, at__lte=when)
        .values("variant_id")
        .annotate(last=Max("sequence"), n=Count("match"))
        .order_by()
    )
    counts = {row["last"]: row["n"] for row in latest}
    rows = RatingHistory.objects.filter(bot_id=bot_id, sequence__in=counts).select_related(
        "variant"
    )
    return sorted(
        (
            {
                "variant": row.variant.name,
                "mu": row.mu_after,
                "sigma": row.sigma_after,
                "conservative": conservative(row.mu_after, row.sigma_after),
                "matches": counts[row.sequence],
                "provisional": is_provisional(counts[row.sequence]),
                "as_of": row.at,
                "match": row.match_id,
            }
            for row in rows
        ),
        key=lambda r: r["variant"],
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
