"""Reads about ratings: leaderboards, a bot's history, ratings on a date, recompute progress."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import QuerySet

from tournaments.models import Rating, RatingHistory, RatingRecompute, RecomputeStatus, Variant
from tournaments.services.ratings import recompute_progress_key


def leaderboard(*, variant: Variant, include_provisional: bool = True) -> QuerySet[Rating]:
    """Ratings of one variant by conservative rating (mu - 3 sigma), best first."""
    ratings = Rating.objects.filter(variant=variant).select_related("bot", "bot__owner")
    if not include_provisional:
        ratings = ratings.filter(matches__gte=settings.RATING_PROVISIONAL_MATCHES)
    return ratings.order_by("-conservative", "bot__name")


def is_provisional(rating: Rating) -> bool:
    """A rating is provisional until the bot has enough rated matches in the variant."""
    return rating.matches < settings.RATING_PROVISIONAL_MATCHES


def rating_history(*, bot_id: int, variant: Variant | None = None) -> QuerySet[RatingHistory]:
    """Every update of a bot's rating, oldest first."""
    rows = RatingHistory.objects.filter(bot_id=bot_id).select_related("variant")
    if variant is not None:
        rows = rows.filter(variant=variant)
    return rows.order_by("variant_id", "sequence")


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
    }
