"""Always-on ladders in the admin: staff switch one on, pause and resume it."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from engine.errors import InvalidVariantError
from tournaments.admin.common import apply_each
from tournaments.models import Ladder
from tournaments.services.ladders import ladder_pause, ladder_resume


class LadderForm(forms.ModelForm):
    class Meta:
        model = Ladder
        fields = [
            "variant",
            "table_size",
            "time_limit_ms",
            "time_bank_ms",
            "duplicate",
            "round_tables",
        ]

    def clean(self) -> dict:
        data = super().clean() or {}
        variant, table_size = data.get("variant"), data.get("table_size")
        if variant is not None and table_size is not None:
            try:
                variant.to_engine().check_players(table_size)
            except InvalidVariantError as exc:
                self.add_error("table_size", exc.reason)
        return data


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    """Staff switch a variant's ladder on by adding it, and pause or resume it."""

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

    def _control(self, request: HttpRequest, rows: QuerySet, service, verb: str) -> None:
        apply_each(self, request, rows, lambda ladder: service(ladder=ladder), verb)

    @admin.action(description="Pause the selected ladders")
    def pause_ladders(self, request: HttpRequest, queryset: QuerySet[Ladder]) -> None:
        self._control(request, queryset, ladder_pause, "Paused")

    @admin.action(description="Resume the selected ladders")
    def resume_ladders(self, request: HttpRequest, queryset: QuerySet[Ladder]) -> None:
        self._control(request, queryset, ladder_resume, "Resumed")
