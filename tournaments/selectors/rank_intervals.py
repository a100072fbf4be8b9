"""Reads of the batch ranks: a variant's latest fit and each bot's rank with its interval."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from tournaments.models import RankFit, RankInterval


def rank_fit(*, variant_id: int) -> RankFit | None:
    """The variant's latest batch fit, or None before its first."""
    return RankFit.objects.filter(variant_id=variant_id).first()


def rank_intervals(*, variant_id: int) -> QuerySet[RankInterval]:
    """Every bot of the variant's latest fit, best rank first (equal ranks by bot id)."""
    return (
        RankInterval.objects.filter(fit__variant_id=variant_id)
        .select_related("bot", "fit")
        .order_by("rank", "bot_id")
    )


def rank_intervals_of(*, variant_id: int, bot_ids: Iterable[int]) -> dict[int, RankInterval]:
    """The latest fit's rows of these bots, by bot id (bots it did not see are left out)."""
    rows = RankInterval.objects.filter(fit__variant_id=variant_id, bot_id__in=list(bot_ids))
    return {row.bot_id: row for row in rows}
