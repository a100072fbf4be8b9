"""Bots, their health checks and the shared hosts in the admin."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from tournaments.models import Bot, BotHealthCheck, SharedHost, signed_in
from tournaments.services.bots import bot_disable, bot_enable, bot_verify_request


class HealthCheckInline(admin.TabularInline):
    model = BotHealthCheck
    extra = 0
    can_delete = False
    fields = readonly_fields = ("at", "ok", "latency_ms", "error_kind", "error_message")

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
        "ladder_opt_in",
        "created_at",
    ]
    list_filter = ["status", "disabled_cause", "ladder_opt_in", "created_at"]
    search_fields = ["name", "owner__username", "endpoint_url"]
    list_select_related = ["owner"]
    # The secret is never shown, not even to staff: the owner rotates it if it is lost.
    exclude = ["secret"]
    readonly_fields = [
        "created_at",
        "updated_at",
        "last_verified_at",
        "consecutive_failures",
        "endpoint_addresses",
        "matches_played",
        # The reference players' house bots are made by tournaments/services/scrimmages.py.
        "reference_player",
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

    @admin.action(description="Verify the selected bots (queues a hello check of each)")
    def verify_bots(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        bots = list(queryset)
        for bot in bots:
            bot_verify_request(bot=bot, counted=False)
        self.message_user(
            request,
            f"Queued a hello check of {len(bots)} bot(s); the outcomes appear under "
            "health checks as workers call the bots.",
        )


@admin.register(SharedHost)
class SharedHostAdmin(admin.ModelAdmin):
    """Addresses hosting the bots of many people (a course server): bots there may sit
    together on the ladders when their owners differ (tournaments/selectors/teams.py)."""

    list_display = ["address", "note", "created_by", "created_at"]
    list_filter = ["created_at"]
    list_select_related = ["created_by"]
    search_fields = ["address", "note"]
    readonly_fields = ["created_by", "created_at"]

    def save_model(self, request: HttpRequest, obj: SharedHost, form, change: bool) -> None:
        if not change:
            obj.created_by = signed_in(request.user)
        super().save_model(request, obj, form, change)


@admin.register(BotHealthCheck)
class BotHealthCheckAdmin(admin.ModelAdmin):
    list_display = ["bot", "at", "ok", "latency_ms", "error_kind", "error_message"]
    list_filter = ["ok", "error_kind", "at"]
    search_fields = ["bot__name"]
    list_select_related = ["bot"]
    readonly_fields = [
        "bot",
        "at",
        "ok",
        "latency_ms",
        "error_kind",
        "error_message",
    ]
