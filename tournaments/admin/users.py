"""Accounts' confirmed addresses in the admin."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from tournaments.admin.common import ReadOnlyAdmin, apply_each
from tournaments.models import ConfirmedEmail
from tournaments.services.users import user_withdraw_email_confirmation


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

    def delete_model(self, request: HttpRequest, obj: ConfirmedEmail) -> None:
        user_withdraw_email_confirmation(confirmed=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ConfirmedEmail]) -> None:
        apply_each(
            self,
            request,
            queryset,
            lambda confirmed: user_withdraw_email_confirmation(confirmed=confirmed),
            "Withdrew",
        )
