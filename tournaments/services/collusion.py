"""Scan each variant's rated history for pairs of bots that work together, and store the flags.

Every ``COLLUSION_SECONDS`` (the beat entry ``scan-collusion``, on the bulk queue) each variant's
latest ``COLLUSION_MAX_MATCHES`` matches that changed the ratings (``counted_matches``: never a
scrimmage's or an unrated tournament's) are read as the batch ranks read them
(``match_standing``: by total, equal totals sharing a place, disqualified seats sharing last;
a duplicate group's rotations as one unit), and every pair of bots with
``COLLUSION_MIN_TABLES`` tables together and as many apart is tested (tournaments/collusion.py).
The pairs flagged at ``COLLUSION_FALSE_DISCOVERY_RATE`` are stored with their evidence, for staff
only (the admin and ``GET /api/staff/collusion/``).

A variant is scanned again only when the finishing orders it would read or the settings changed
since its last scan. A new scan replaces the old one in one transaction, so a reader sees one or
the other.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from tournaments.collusion import PairEvidence, detect
from tournaments.maths.intervals import Finish
from tournaments.models import CollusionFlag, CollusionScan
from tournaments.selectors.rated_matches import counted_matches, latest_finishes

COLLUSION_LOCK_KEY = 7_042_020  # with the variant's id: one writer of a variant's scan at a time


@dataclass(frozen=True, slots=True)
class ScanInput:
    """The rated matches of a variant a scan reads, as units, and a digest of all that decides
    the stored scan (the finishing orders and the settings)."""

    units: list[list[Finish]]
    matches: int
    digest: str
    read_at: datetime


def _read(variant_id: int) -> ScanInput | None:
    """The variant's latest rated matches, oldest first, grouped as they were rated."""
    read_at = timezone.now()
    units = latest_finishes(variant_id=variant_id, limit=settings.COLLUSION_MAX_MATCHES)
    if not units:
        return None
    decided_by = (
        [[(f.bots, f.places) for f in unit] for unit in units],
        settings.COLLUSION_MIN_TABLES,
        settings.COLLUSION_FALSE_DISCOVERY_RATE,
    )
    digest = hashlib.sha256(repr(decided_by).encode()).hexdigest()
    return ScanInput(units, sum(len(unit) for unit in units), digest, read_at)


def collusion_scan(*, variant_id: int) -> bool:
    """Scan one variant's history and store the flagged pairs, unless the stored scan is of the
    same finishing orders under the same settings; return whether a new scan was stored."""
    read = _read(variant_id)
    stored = CollusionScan.objects.filter(variant_id=variant_id).first()
    if read is None or (stored is not None and stored.digest == read.digest):
        return False
    found = detect(
        read.units,
        min_tables=settings.COLLUSION_MIN_TABLES,
        false_discovery_rate=settings.COLLUSION_FALSE_DISCOVERY_RATE,
    )
    return _store(variant_id, read, found)


@transaction.atomic
def _store(variant_id: int, read: ScanInput, found: list[PairEvidence]) -> bool:
    """Replace the variant's scan with this one, unless a scan of later-read matches is stored."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [COLLUSION_LOCK_KEY, variant_id])
    stored = CollusionScan.objects.filter(variant_id=variant_id).first()
    if stored is not None and stored.scanned_at > read.read_at:
        return False
    CollusionScan.objects.filter(variant_id=variant_id).delete()
    scan = CollusionScan.objects.create(
        variant_id=variant_id,
        matches=read.matches,
        pairs_tested=len(found),
        min_tables=settings.COLLUSION_MIN_TABLES,
        false_discovery_rate=settings.COLLUSION_FALSE_DISCOVERY_RATE,
        digest=read.digest,
        scanned_at=read.read_at,
    )
    CollusionFlag.objects.bulk_create(
        CollusionFlag(
            scan=scan,
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
        for pair in found
        if pair.flagged
    )
    return True


def collusion_scan_all() -> dict[str, int]:
    """Scan every variant with rated matches whose stored scan is not current; count them."""
    counts = {"scanned": 0, "current": 0}
    rated = counted_matches().values_list("variant_id", flat=True)
    for variant_id in rated.distinct().order_by("variant_id"):
        counts["scanned" if collusion_scan(variant_id=variant_id) else "current"] += 1
    return counts
