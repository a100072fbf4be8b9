"""Fit each variant's rated history at once and store every bot's rank with its interval.

Beside the live TrueSkill ratings, which follow the order the matches were played in, each
variant's latest ``RANK_INTERVALS_MAX_MATCHES`` rated matches are fitted in one batch
(Plackett-Luce, tournaments/maths/intervals.py) and refitted on ``RANK_INTERVALS_RESAMPLES``
resamples of them. A match's finishing order is the one the live writer rates it by
(``match_standing``: by total, equal totals sharing a place, disqualified seats sharing last);
the rotations of a duplicate group are each fitted as the match they were, and drawn together in
a resample, as they share their deals. Only the matches read are fitted, never more, so a fit
takes a bounded time however long the history grows.

A variant is fitted again only when the finishing orders it would fit or the settings changed
since its last fit. A new fit replaces the old one in one transaction, so a reader sees one or
the other.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from tournaments.maths.intervals import Finish, RankIntervals, bootstrap
from tournaments.models import RankFit, RankInterval
from tournaments.selectors.rated_matches import counted_matches, latest_finishes

RANK_FIT_LOCK_KEY = 7_042_019  # with the variant's id: one writer of a variant's fit at a time


@dataclass(frozen=True, slots=True)
class History:
    """The rated matches of a variant that a fit takes, as units drawn together, and a digest
    of all that decides the stored fit (the finishing orders and the settings)."""

    units: list[list[Finish]]
    matches: int
    digest: str
    read_at: datetime


def _history(variant_id: int) -> History | None:
    """The variant's latest matches that changed its ratings, oldest first, grouped as they
    were rated (never an unrated tournament's or a scrimmage's: handled by the rating writer,
    but without a place in the rating sequence)."""
    read_at = timezone.now()
    units = latest_finishes(variant_id=variant_id, limit=settings.RANK_INTERVALS_MAX_MATCHES)
    if not units:
        return None
    decided_by = (
        [[(f.bots, f.places) for f in unit] for unit in units],
        settings.RANK_INTERVALS_RESAMPLES,
        settings.RANK_INTERVALS_MIN_MATCHES,
    )
    digest = hashlib.sha256(repr(decided_by).encode()).hexdigest()
    return History(units, sum(len(unit) for unit in units), digest, read_at)


def rank_intervals_fit(*, variant_id: int) -> bool:
    """Fit one variant's history and store the ranks, unless the stored fit is of the same
    finishing orders under the same settings; return whether a new fit was stored.

    A recompute (which can change how results are read, never the matches) asks for every
    variant: one whose finishing orders came out the same keeps its fit, which is the fit the
    same orders give again, as the resamples are drawn from a seed taken from the digest.
    """
    history = _history(variant_id)
    stored = RankFit.objects.filter(variant_id=variant_id).first()
    if history is None or (stored is not None and stored.digest == history.digest):
        return False
    rng = np.random.default_rng(int(history.digest[:16], 16))
    result = bootstrap(history.units, resamples=settings.RANK_INTERVALS_RESAMPLES, rng=rng)
    return _store(variant_id, history, result)


@transaction.atomic
def _store(variant_id: int, history: History, result: RankIntervals) -> bool:
    """Replace the variant's fit with this one, unless a fit of later-read matches is stored."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [RANK_FIT_LOCK_KEY, variant_id])
    stored = RankFit.objects.filter(variant_id=variant_id).first()
    if stored is not None and stored.fitted_at > history.read_at:
        return False
    RankFit.objects.filter(variant_id=variant_id).delete()
    fit = RankFit.objects.create(
        variant_id=variant_id,
        matches=history.matches,
        digest=history.digest,
        resamples=settings.RANK_INTERVALS_RESAMPLES,
        fitted_at=history.read_at,
    )
    enough = settings.RANK_INTERVALS_MIN_MATCHES
    RankInterval.objects.bulk_create(
        RankInterval(
            fit=fit,
            bot_id=rank.bot,
            rank=rank.rank,
            low=rank.low if rank.matches >= enough else None,
            high=rank.high if rank.matches >= enough else None,
            strength=rank.strength,
            matches=rank.matches,
        )
        for rank in result.ranks
    )
    return True


def rank_intervals_fit_all() -> dict[str, int]:
    """Fit every variant with rated matches whose stored fit is not current; count them."""
    counts = {"fitted": 0, "current": 0}
    rated = counted_matches().values_list("variant_id", flat=True)
    for variant_id in rated.distinct().order_by("variant_id"):
        counts["fitted" if rank_intervals_fit(variant_id=variant_id) else "current"] += 1
    return counts
