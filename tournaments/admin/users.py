"""Accounts' confirmed addresses in the admin."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from tournaments.admin.common import ReadOnlyAdmin
from tournaments.models import ConfirmedEmail


@admin.register(ConfirmedEmail)
class ConfirmedEmailAdmin(ReadOnlyAdmin):
    """Addresses accounts confirmed by their mailed links. Staff may delete one: the account is
    unconfirmed, and its bots leave the ladders, until it follows a new link."""

    list_display = ["user", "email", "confirmed_at"]
    list_filter = ["confirmed_at"]
    search_fields = ["user__username", "email"]
    list_select_related = ["user"]

    def has_delete_permission(
        self, request: HttpRequest, obj: ConfirmedEmail | None = None
    ) -> bool:
        return bool(request.user.is_staff)
