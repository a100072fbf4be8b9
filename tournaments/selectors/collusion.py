"""Reads of the collusion scans: a variant's latest scan, the pairs and bots it flagged (staff
only)."""

from __future__ import annotations

from django.db.models import QuerySet

from tournaments.models import CollusionBotFlag, CollusionFlag, CollusionScan


def collusion_scan(*, variant_id: int) -> CollusionScan | None:
    """The variant's latest collusion scan, or None before its first."""
    return CollusionScan.objects.filter(variant_id=variant_id).first()


def collusion_flags(*, variant_id: int) -> QuerySet[CollusionFlag]:
    """The pairs the variant's latest scan flagged, strongest evidence first."""
    return (
        CollusionFlag.objects.filter(scan__variant_id=variant_id)
        .select_related("beneficiary", "partner", "scan")
        .order_by("adjusted_p", "p_value", "beneficiary_id", "partner_id")
    )


def collusion_bot_flags(*, variant_id: int) -> QuerySet[CollusionBotFlag]:
    """The bots the variant's latest scan flagged as lifted by many table-mates, strongest
    evidence first."""
    return (
        CollusionBotFlag.objects.filter(scan__variant_id=variant_id)
        .select_related("bot")
        .order_by("adjusted_p", "p_value", "bot_id")
    )
