"""What every area of the admin shares: read-only pages and actions that call a service."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from tournaments.errors import ApplicationError


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by the services: staff look, never edit."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


Row = TypeVar("Row", bound=Model)


def apply_each(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    rows: QuerySet[Row],
    call: Callable[[Row], object],
    verb: str,
) -> None:
    """Call a service on each selected row, reporting what it refused instead of failing."""
    done = 0
    for row in rows:
        try:
            call(row)
            done += 1
        except ApplicationError as exc:
            model_admin.message_user(request, f"{row}: {exc.message}", level=messages.WARNING)
    if done:
        model_admin.message_user(request, f"{verb} {done} of {len(rows)}.")
