"""Matches, their seats, faults and replays in the admin."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from tournaments.admin.common import ReadOnlyAdmin, ReadOnlyInline, apply_each
from tournaments.models import Match, MatchSeat, Replay, SeatFault, VoidedDeal
from tournaments.services.matches import match_retry


class SeatInline(ReadOnlyInline):
    model = MatchSeat
    fields = readonly_fields = (
        "seat",
        "bot",
        "score",
        "rank",
        "bids_exact",
        "bids_total",
        "exact_bid_rate",
        "faults",
        "disqualified",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[MatchSeat]:
        return super().get_queryset(request).select_related("bot")


class VoidedDealInline(ReadOnlyInline):
    model = VoidedDeal
    fields = readonly_fields = ("voided_at", "reason", "seed")


@admin.register(Match)
class MatchAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "tournament",
        "ladder",
        "scrimmage",
        "variant",
        "round",
        "status",
        "attempts",
        "rated",
        "claimed_by",
        "duration",
    ]
    list_filter = [
        "status",
        "rated",
        "variant",
        ("tournament", admin.RelatedOnlyFieldListFilter),
    ]
    search_fields = ["=id", "tournament__name", "duplicate_group", "claimed_by", "error"]
    list_select_related = ["tournament", "ladder__variant", "scrimmage", "variant"]
    # The deal and its rules are committed before play (the seed's commitment is published),
    # and a match moves only through the services: staff retry a failed one.
    readonly_fields = ["duration"]
    raw_id_fields = ["tournament", "ladder"]
    inlines = [SeatInline, VoidedDealInline]
    actions = ["retry_failed_matches"]

    @admin.action(description="Retry the selected failed matches (attempts reset)")
    def retry_failed_matches(self, request: HttpRequest, queryset: QuerySet[Match]) -> None:
        apply_each(self, request, queryset, lambda m: match_retry(match=m), "Queued again")

    @admin.display(description="duration")
    def duration(self, match: Match) -> str:
        if match.started_at and match.finished_at:
            return f"{(match.finished_at - match.started_at).total_seconds():.1f} s"
        return "-"


@admin.register(MatchSeat)
class MatchSeatAdmin(ReadOnlyAdmin):
    list_display = [
        "match",
        "seat",
        "bot",
        "score",
        "rank",
        "bids_exact",
        "bids_total",
        "faults",
        "disqualified",
    ]
    list_filter = ["disqualified"]
    search_fields = ["bot__name", "=match__id"]
    list_select_related = ["match", "bot"]
    raw_id_fields = ["match", "bot"]


@admin.register(SeatFault)
class SeatFaultAdmin(ReadOnlyAdmin):
    list_display = ["seat", "kind", "count", "latency_ms", "sample"]
    list_filter = ["kind"]
    search_fields = ["seat__bot__name"]
    list_select_related = ["seat__bot", "seat__match"]
    raw_id_fields = ["seat"]


@admin.register(Replay)
class ReplayAdmin(ReadOnlyAdmin):
    list_display = ["match", "format_version", "created_at"]
    list_filter = ["format_version", "created_at"]
    search_fields = ["=match__id"]
    list_select_related = ["match"]
    raw_id_fields = ["match"]
    readonly_fields = ["created_at"]
