"""Collusion scans and their flagged pairs and bots in the admin, read only."""

from __future__ import annotations

from django.contrib import admin

from tournaments.admin.common import ReadOnlyAdmin, ReadOnlyInline
from tournaments.models import CollusionBotFlag, CollusionFlag, CollusionScan


class CollusionFlagInline(ReadOnlyInline):
    model = CollusionFlag
    fields = readonly_fields = (
        "beneficiary",
        "partner",
        "tables",
        "beneficiary_with",
        "beneficiary_without",
        "partner_with",
        "partner_without",
        "lift",
        "drop",
        "z",
        "p_value",
        "adjusted_p",
    )


class CollusionBotFlagInline(ReadOnlyInline):
    model = CollusionBotFlag
    fields = readonly_fields = (
        "bot",
        "table_mates",
        "partners",
        "tables",
        "statistic",
        "p_value",
        "adjusted_p",
    )


@admin.register(CollusionScan)
class CollusionScanAdmin(ReadOnlyAdmin):
    """Each variant's latest collusion scan with the pairs and bots it flagged
    (docs/tournaments.md)."""

    list_display = ["variant", "matches", "pairs_tested", "flagged", "bots_flagged", "scanned_at"]
    list_select_related = ["variant"]
    search_fields = ["variant__name"]
    fields = readonly_fields = (
        "variant",
        "matches",
        "pairs_tested",
        "bots_tested",
        "min_tables",
        "min_repeat",
        "false_discovery_rate",
        "scanned_at",
    )
    inlines = [CollusionFlagInline, CollusionBotFlagInline]

    @admin.display(description="pairs flagged")
    def flagged(self, scan: CollusionScan) -> int:
        return scan.flags.count()

    @admin.display(description="bots flagged")
    def bots_flagged(self, scan: CollusionScan) -> int:
        return scan.bot_flags.count()


@admin.register(CollusionFlag)
class CollusionFlagAdmin(ReadOnlyAdmin):
    """Every flagged pair of the latest scans, strongest evidence first."""

    list_display = [
        "beneficiary",
        "partner",
        "variant",
        "tables",
        "beneficiary_with",
        "beneficiary_without",
        "partner_with",
        "partner_without",
        "adjusted_p",
    ]
    list_filter = ["scan__variant"]
    list_select_related = ["beneficiary", "partner", "scan__variant"]
    search_fields = ["beneficiary__name", "partner__name"]

    @admin.display(description="variant")
    def variant(self, flag: CollusionFlag) -> str:
        return str(flag.scan.variant)
