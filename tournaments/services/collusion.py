"""Scan each variant's collusion sums for pairs and bots that work together, and store the flags.

Every ``COLLUSION_SECONDS`` (the beat entry ``scan-collusion``, on the bulk queue) each variant's
running sums are read: kept per bot and per pair as each unit that changed the ratings is rated
(tournaments/services/collusion_totals.py; never a scrimmage's or an unrated tournament's), so
the whole history counts and a scan reads no match. Every pair with ``COLLUSION_MIN_TABLES``
tables together and as many apart is tested, and every bot against the table-mates it shared
``COLLUSION_MIN_REPEAT`` tables or more with (tournaments/maths/collusion.py). The pairs and bots
flagged at ``COLLUSION_FALSE_DISCOVERY_RATE`` are stored with their evidence, for staff only
(the admin and ``GET /api/staff/collusion/``).

A variant is scanned again only when it has rated matches or settings its last scan did not.
A new scan replaces the old one in one transaction, so a reader sees one or the other.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Max
from django.utils import timezone

from tournaments.maths.collusion import Moments, PairSums, Totals, Verdict, scan
from tournaments.models import (
    CollusionBotFlag,
    CollusionBotTotal,
    CollusionFlag,
    CollusionPairTotal,
    CollusionScan,
)
from tournaments.selectors.rated_matches import counted_matches

COLLUSION_LOCK_KEY = 7_042_020  # with the variant's id: one writer of a variant's scan at a time


@dataclass(frozen=True, slots=True)
class ScanInput:
    """What a scan covers: the variant's rated matches and a digest of all that decides the
    stored scan (the last match rated and the settings)."""

    matches: int
    digest: str
    read_at: datetime


def _settings() -> tuple[int, int, float]:
    return (
        settings.COLLUSION_MIN_TABLES,
        settings.COLLUSION_MIN_REPEAT,
        settings.COLLUSION_FALSE_DISCOVERY_RATE,
    )


def _covered(variant_id: int) -> ScanInput | None:
    """How many rated matches the variant's sums hold and the digest of the scan of them."""
    read_at = timezone.now()
    covered = counted_matches().filter(variant_id=variant_id)
    seen = covered.aggregate(matches=Count("pk"), last=Max("rating_sequence"))
    if not seen["matches"]:
        return None
    decided_by = (seen["matches"], seen["last"], _settings())
    digest = hashlib.sha256(repr(decided_by).encode()).hexdigest()
    return ScanInput(seen["matches"], digest, read_at)


def _totals(variant_id: int) -> Totals:
    """The variant's bot sums and the sums of the pairs that met often enough to be tested."""
    totals = Totals()
    bots = CollusionBotTotal.objects.filter(variant_id=variant_id)
    for bot, n, total, squares, raw in bots.values_list("bot_id", "n", "total", "squares", "raw"):
        totals.bots[bot] = Moments(n, total, squares, raw)
    least = max(2, min(settings.COLLUSION_MIN_TABLES, settings.COLLUSION_MIN_REPEAT))
    pairs = CollusionPairTotal.objects.filter(variant_id=variant_id, tables__gte=least)
    for first, second, sums in pairs.values_list("first_id", "second_id", "sums").iterator(
        chunk_size=5000
    ):
        totals.pairs[first, second] = PairSums.from_list(sums)
    return totals


def collusion_scan(*, variant_id: int) -> bool:
    """Scan one variant's sums and store the flagged pairs and bots, unless the stored scan
    covers the same matches under the same settings; return whether a new scan was stored."""
    read = _covered(variant_id)
    stored = CollusionScan.objects.filter(variant_id=variant_id).first()
    if read is None or (stored is not None and stored.digest == read.digest):
        return False
    min_tables, min_repeat, rate = _settings()
    found = scan(
        _totals(variant_id),
        min_tables=min_tables,
        min_repeat=min_repeat,
        false_discovery_rate=rate,
    )
    return _store(variant_id, read, found)


@transaction.atomic
def _store(variant_id: int, read: ScanInput, found: Verdict) -> bool:
    """Replace the variant's scan with this one, unless a scan of later-read matches is stored."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [COLLUSION_LOCK_KEY, variant_id])
    stored = CollusionScan.objects.filter(variant_id=variant_id).first()
    if stored is not None and stored.scanned_at > read.read_at:
        return False
    CollusionScan.objects.filter(variant_id=variant_id).delete()
    stored_scan = CollusionScan.objects.create(
        variant_id=variant_id,
        matches=read.matches,
        pairs_tested=len(found.pairs),
        bots_tested=len(found.bots),
        min_tables=settings.COLLUSION_MIN_TABLES,
        min_repeat=settings.COLLUSION_MIN_REPEAT,
        false_discovery_rate=settings.COLLUSION_FALSE_DISCOVERY_RATE,
        digest=read.digest,
        scanned_at=read.read_at,
    )
    CollusionFlag.objects.bulk_create(
        CollusionFlag(
            scan=stored_scan,
            beneficiary_id=pair.beneficiary,
            partner_id=pair.partner,
            tables=pair.tables,
            beneficiary_with=pair.beneficiary_with,
            beneficiary_without=pair.beneficiary_without,
            partner_with=pair.partner_with,
            partner_without=pair.partner_without,
            lift=pair.lift,
            drop=pair.drop,
            z=pair.z,
            p_value=pair.p_value,
            adjusted_p=pair.adjusted_p,
        )
        for pair in found.pairs
        if pair.flagged
    )
    CollusionBotFlag.objects.bulk_create(
        CollusionBotFlag(
            scan=stored_scan,
            bot_id=bot.bot,
            table_mates=bot.table_mates,
            partners=bot.partners,
            tables=bot.tables,
            statistic=bot.statistic,
            p_value=bot.p_value,
            adjusted_p=bot.adjusted_p,
        )
        for bot in found.bots
        if bot.flagged
    )
    return True


def collusion_scan_all() -> dict[str, int]:
    """Scan every variant with rated matches whose stored scan is not current; count them."""
    counts = {"scanned": 0, "current": 0}
    rated = counted_matches().values_list("variant_id", flat=True)
    for variant_id in rated.distinct().order_by("variant_id"):
        counts["scanned" if collusion_scan(variant_id=variant_id) else "current"] += 1
    return counts
