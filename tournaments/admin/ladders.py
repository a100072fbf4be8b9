"""Always-on ladders in the admin: staff switch one on, change, pause and resume it."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from tournaments.admin.common import ServiceAdmin, ServiceForm, apply_each
from tournaments.models import Ladder
from tournaments.services.ladders import (
    LADDER_EDITABLE,
    ladder_create,
    ladder_pause,
    ladder_resume,
    ladder_update,
)


class LadderForm(ServiceForm):
    """Switch a ladder on with ``ladder_create``, or change one with ``ladder_update``."""

    class Meta:
        model = Ladder
        fields = ["variant", *LADDER_EDITABLE]

    def save_through(self, data: dict[str, Any]) -> Ladder:
        if self.instance.pk is None:
            return ladder_create(**data)
        return ladder_update(ladder=self.instance, data=data)


@admin.register(Ladder)
class LadderAdmin(ServiceAdmin):
    """Staff switch a variant's ladder on by adding it, change how it makes its next tables,
    and pause or resume it."""

    form = LadderForm
    list_display = [
        "variant",
        "status",
        "table_size",
        "time_limit_ms",
        "time_bank_ms",
        "duplicate",
        "round_tables",
        "created_at",
    ]
    list_filter = ["status"]
    list_select_related = ["variant"]
    readonly_fields = ["status", "created_at", "updated_at"]
    actions = ["pause_ladders", "resume_ladders"]

    def get_readonly_fields(self, request: HttpRequest, obj: Ladder | None = None) -> list[str]:
        # A variant has one ladder for good: its matches and shares belong to it.
        return [*self.readonly_fields, *(["variant"] if obj is not None else [])]

    def has_delete_permission(self, request: HttpRequest, obj: Ladder | None = None) -> bool:
        return False  # its matches keep it; pause it instead

    def _control(self, request: HttpRequest, rows: QuerySet, service, verb: str) -> None:
        apply_each(self, request, rows, lambda ladder: service(ladder=ladder), verb)

    @admin.action(description="Pause the selected ladders")
    def pause_ladders(self, request: HttpRequest, queryset: QuerySet[Ladder]) -> None:
        self._control(request, queryset, ladder_pause, "Paused")

    @admin.action(description="Resume the selected ladders")
    def resume_ladders(self, request: HttpRequest, queryset: QuerySet[Ladder]) -> None:
        self._control(request, queryset, ladder_resume, "Resumed")
