"""Admin for every model: what staff and organisers need to look after bots and matches."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from tournaments.models import (
    Bot,
    BotHealthCheck,
    Match,
    MatchSeat,
    Rating,
    RatingHistory,
    Replay,
    SeatFault,
    Tournament,
    TournamentEntry,
    Variant,
)
from tournaments.services.bots import bot_disable, bot_enable, bot_verify


class HealthCheckInline(admin.TabularInline):
    model = BotHealthCheck
    extra = 0
    can_delete = False
    fields = readonly_fields = ["at", "ok", "latency_ms", "error_kind", "error_message"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).order_by("-at")

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "owner",
        "status",
        "disabled_reason",
        "last_verified_at",
        "consecutive_failures",
        "created_at",
    ]
    list_filter = ["status", "disabled_cause", "created_at"]
    search_fields = ["name", "owner__username", "endpoint_url"]
    list_select_related = ["owner"]
    # The secret is never shown, not even to staff: the owner rotates it if it is lost.
    exclude = ["secret"]
    readonly_fields = [
        "created_at",
        "updated_at",
        "last_verified_at",
        "consecutive_failures",
        "matches_played",
    ]
    raw_id_fields = ["owner"]
    inlines = [HealthCheckInline]
    actions = ["disable_bots", "enable_bots", "verify_bots"]

    @admin.display(description="matches played")
    def matches_played(self, bot: Bot) -> int:
        return bot.seats.count()

    @admin.action(description="Disable the selected bots")
    def disable_bots(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot in queryset:
            bot_disable(bot=bot, reason=f"Disabled by {request.user.get_username()}.")
        self.message_user(request, f"Disabled {len(queryset)} bot(s).")

    @admin.action(description="Enable the selected bots (they must pass verification)")
    def enable_bots(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot in queryset:
            bot_enable(bot=bot)
        self.message_user(request, f"Enabled {len(queryset)} bot(s), pending verification.")

    @admin.action(description="Verify the selected bots now (calls hello)")
    def verify_bots(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot in queryset[:20]:
            check = bot_verify(bot=bot)
            level = messages.SUCCESS if check.ok else messages.WARNING
            outcome = "passed" if check.ok else f"failed: {check.error_message}"
            self.message_user(request, f"{bot.name}: {outcome}", level=level)


@admin.register(BotHealthCheck)
class BotHealthCheckAdmin(admin.ModelAdmin):
    list_display = ["bot", "at", "ok", "latency_ms", "error_kind", "error_message"]
    list_filter = ["ok", "error_kind", "at"]
    search_fields = ["bot__name"]
    list_select_related = ["bot"]
    readonly_fields = ["bot", "at", "ok", "latency_ms", "error_kind", "error_message"]


@admin.register(Variant)
class VariantAdmin(admin.ModelAdmin):
    list_display = ["name", "base", "is_preset", "created_by", "created_at", "tournament_count"]
    list_filter = ["is_preset", "base"]
    search_fields = ["name", "description"]
    list_select_related = ["created_by"]
    readonly_fields = ["created_at", "rules"]
    raw_id_fields = ["created_by"]

    @admin.display(description="tournaments")
    def tournament_count(self, variant: Variant) -> int:
        return variant.tournaments.count()

    @admin.display(description="rules")
    def rules(self, variant: Variant) -> str:
        from tournaments.selectors.variants import variant_rules

        rules = variant_rules(variant=variant)
        return rules["problem"] or "\n".join(rules["rules"])


class EntryInline(admin.TabularInline):
    model = TournamentEntry
    extra = 0
    raw_id_fields = ["bot"]


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "variant",
        "format",
        "status",
        "organiser",
        "table_size",
        "start_at",
        "entry_count",
    ]
    list_filter = ["status", "format", "variant"]
    search_fields = ["name", "organiser__username"]
    list_select_related = ["variant", "organiser"]
    readonly_fields = ["created_at", "updated_at", "started_at", "finished_at"]
    raw_id_fields = ["organiser"]
    inlines = [EntryInline]

    @admin.display(description="entries")
    def entry_count(self, tournament: Tournament) -> int:
        return tournament.entries.count()


@admin.register(TournamentEntry)
class TournamentEntryAdmin(admin.ModelAdmin):
    list_display = ["tournament", "bot", "created_at"]
    list_filter = ["tournament__status", "created_at"]
    search_fields = ["tournament__name", "bot__name"]
    list_select_related = ["tournament", "bot"]
    raw_id_fields = ["tournament", "bot"]


class SeatInline(admin.TabularInline):
    model = MatchSeat
    extra = 0
    raw_id_fields = ["bot"]
    readonly_fields = ["exact_bid_rate"]


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "tournament",
        "variant",
        "round",
        "status",
        "attempts",
        "rated",
        "claimed_by",
        "finished_at",
        "duration",
    ]
    list_filter = ["status", "rated", "variant"]
    search_fields = ["=id", "tournament__name", "duplicate_group", "claimed_by"]
    list_select_related = ["tournament", "variant"]
    readonly_fields = [
        "created_at",
        "updated_at",
        "claimed_at",
        "heartbeat_at",
        "started_at",
        "finished_at",
        "rated_at",
        "rating_sequence",
        "duration",
    ]
    raw_id_fields = ["tournament"]
    inlines = [SeatInline]

    @admin.display(description="duration")
    def duration(self, match: Match) -> str:
        if match.started_at and match.finished_at:
            return f"{(match.finished_at - match.started_at).total_seconds():.1f} s"
        return "-"


@admin.register(MatchSeat)
class MatchSeatAdmin(admin.ModelAdmin):
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
    readonly_fields = ["exact_bid_rate"]


@admin.register(SeatFault)
class SeatFaultAdmin(admin.ModelAdmin):
    list_display = ["seat", "kind", "count", "latency_ms", "sample"]
    list_filter = ["kind"]
    search_fields = ["seat__bot__name"]
    list_select_related = ["seat__bot", "seat__match"]
    raw_id_fields = ["seat"]


@admin.register(Replay)
class ReplayAdmin(admin.ModelAdmin):
    list_display = ["match", "format_version", "created_at"]
    list_filter = ["format_version", "created_at"]
    search_fields = ["=match__id"]
    list_select_related = ["match"]
    raw_id_fields = ["match"]
    readonly_fields = ["created_at"]


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ["bot", "variant", "mu", "sigma", "conservative", "matches", "updated_at"]
    list_filter = ["variant"]
    search_fields = ["bot__name"]
    list_select_related = ["bot", "variant"]
    readonly_fields = ["conservative", "updated_at"]
    raw_id_fields = ["bot"]


@admin.register(RatingHistory)
class RatingHistoryAdmin(admin.ModelAdmin):
    list_display = [
        "bot",
        "variant",
        "match",
        "sequence",
        "mu_before",
        "mu_after",
        "sigma_after",
        "at",
    ]
    list_filter = ["variant"]
    search_fields = ["bot__name", "=match__id"]
    list_select_related = ["bot", "variant"]
    raw_id_fields = ["bot", "match"]
    readonly_fields = ["at"]
