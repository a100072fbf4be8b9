"""Bots, their health checks and the shared hosts in the admin."""

from __future__ import annotations

import copy
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from tournaments.admin.common import (
    ReadOnlyAdmin,
    ReadOnlyInline,
    ServiceAdmin,
    ServiceForm,
    apply_each,
)
from tournaments.models import Bot, BotHealthCheck, SharedHost, signed_in
from tournaments.services.bots import (
    bot_delete,
    bot_disable,
    bot_enable,
    bot_update,
    bot_verify_request,
)
from tournaments.services.hosts import shared_host_add, shared_host_remove, shared_host_update
from tournaments.services.ladders import bot_set_ladder_opt_in


class HealthCheckInline(ReadOnlyInline):
    model = BotHealthCheck
    fields = readonly_fields = ("at", "ok", "latency_ms", "error_kind", "error_message")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).order_by("-at")


class BotForm(ServiceForm):
    """What staff may change on a bot, each through the service the owner's change goes
    through: its name, description and endpoint (``bot_update``: the network policy, then
    verification again) and its ladder opt-in (``bot_set_ladder_opt_in``: the per-owner cap)."""

    class Meta:
        model = Bot
        fields = ["name", "description", "endpoint_url", "ladder_opt_in"]

    def save_through(self, data: dict[str, Any]) -> Bot:
        bot = copy.copy(self.instance)
        bot = bot_update(bot=bot, data={f: data[f] for f in BOT_UPDATE_FIELDS})
        return bot_set_ladder_opt_in(bot=bot, enabled=data["ladder_opt_in"])


BOT_UPDATE_FIELDS = ("name", "description", "endpoint_url")


@admin.register(Bot)
class BotAdmin(ServiceAdmin):
    """Owners register their bots (the secret is shown only to them); staff change what
    ``BotForm`` allows, and the status only through the actions."""

    form = BotForm
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
    # An owner's consents are theirs to give; the reference players' house bots are made by
    # tournaments/services/scrimmages.py.
    readonly_fields = [
        "owner",
        "status",
        "disabled_cause",
        "disabled_reason",
        "accept_invitations",
        "accepts_scrimmages",
        "version",
        "created_at",
        "updated_at",
        "last_verified_at",
        "security_warnings",
        "consecutive_failures",
        "endpoint_addresses",
        "matches_played",
        "reference_player",
    ]
    inlines = [HealthCheckInline]
    actions = ["disable_bots", "enable_bots", "verify_bots"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: Bot) -> None:
        bot_delete(bot=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        apply_each(self, request, queryset, lambda bot: bot_delete(bot=bot), "Deleted")

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


class SharedHostForm(ServiceForm):
    class Meta:
        model = SharedHost
        fields = ["address", "note"]

    def save_through(self, data: dict[str, Any]) -> SharedHost:
        if self.instance.pk is None:
            return shared_host_add(
                address=data["address"], note=data["note"], created_by=signed_in(self.request.user)
            )
        return shared_host_update(host=copy.copy(self.instance), note=data["note"])


@admin.register(SharedHost)
class SharedHostAdmin(ServiceAdmin):
    """Addresses hosting the bots of many people (a course server): bots there may sit
    together on the ladders when their owners differ (tournaments/selectors/teams.py)."""

    form = SharedHostForm
    list_display = ["address", "note", "created_by", "created_at"]
    list_filter = ["created_at"]
    list_select_related = ["created_by"]
    search_fields = ["address", "note"]
    readonly_fields = ["created_by", "created_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: SharedHost | None = None) -> list[str]:
        # Another address is another listing: add it, and delete this one.
        return [*self.readonly_fields, *(["address"] if obj is not None else [])]

    def delete_model(self, request: HttpRequest, obj: SharedHost) -> None:
        shared_host_remove(host=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[SharedHost]) -> None:
        apply_each(self, request, queryset, lambda host: shared_host_remove(host=host), "Removed")


@admin.register(BotHealthCheck)
class BotHealthCheckAdmin(ReadOnlyAdmin):
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
