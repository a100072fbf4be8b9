"""Tournaments and their entries in the admin."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from tournaments.admin.common import apply_each
from tournaments.models import Tournament, TournamentEntry, TournamentStatus
from tournaments.models.competitions import format_help
from tournaments.selectors.tournaments import CountedTournament, tournament_list
from tournaments.services.tournaments import (
    tournament_cancel,
    tournament_pause,
    tournament_resume,
    tournament_start,
)

# A tournament's definition is fixed once it starts: its matches were made from it (and
# whether they count for the public ratings is settled for all of them at once).
NOT_STARTED = (TournamentStatus.DRAFT, TournamentStatus.SCHEDULED)
FIXED_ONCE_STARTED = [
    "rated",
    "variant",
    "format",
    "table_size",
    "time_limit_ms",
    "time_bank_ms",
    "rounds",
    "games_per_fixture",
    "seed",
    "start_at",
]


def _started(tournament: Tournament | None) -> bool:
    return tournament is not None and tournament.status not in NOT_STARTED


class EntryInline(admin.TabularInline):
    model = TournamentEntry
    extra = 0
    raw_id_fields = ["bot"]

    def has_add_permission(self, request: HttpRequest, obj: Tournament | None = None) -> bool:
        return not _started(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Tournament | None = None) -> bool:
        return not _started(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Tournament | None = None) -> bool:
        return not _started(obj) and super().has_delete_permission(request, obj)


class TournamentForm(forms.ModelForm):
    class Meta:
        model = Tournament
        fields = "__all__"
        help_texts = {"format": format_help()}  # duplicate's deals come round again

    def clean_status(self) -> str:
        status = self.cleaned_data["status"]
        if status not in NOT_STARTED:
            raise forms.ValidationError(
                "Only draft or scheduled can be set here; start, pause, resume and cancel "
                "a tournament with the actions of the list."
            )
        return status


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "variant",
        "format",
        "status",
        "rated",
        "organiser",
        "table_size",
        "start_at",
        "entry_count",
        "progress",
    ]
    list_filter = ["status", "rated", "format", "variant"]
    search_fields = ["name", "organiser__username"]
    list_select_related = ["variant", "organiser"]
    readonly_fields = ["created_at", "updated_at", "started_at", "progress"]
    raw_id_fields = ["organiser"]
    inlines = [EntryInline]
    form = TournamentForm
    actions = ["start_tournaments", "pause_tournaments", "resume_tournaments", "cancel_tournaments"]

    def get_readonly_fields(self, request: HttpRequest, obj: Tournament | None = None) -> list[str]:
        fields = list(self.readonly_fields)
        if _started(obj):  # its status moves only through the actions
            fields += ["status", *FIXED_ONCE_STARTED]
        return fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[CountedTournament]:
        # Counts come from subqueries of the selector, so the list costs the same at any length.
        return tournament_list()

    @admin.display(description="entries")
    def entry_count(self, tournament: CountedTournament) -> int:
        return tournament.entry_count

    @admin.display(description="progress")
    def progress(self, tournament: CountedTournament) -> str:
        total, done = tournament.match_count, tournament.matches_done
        return f"{done}/{total} ({100 * done // total}%)" if total else "-"

    def _control(self, request: HttpRequest, rows: QuerySet, service, verb: str) -> None:
        apply_each(self, request, rows, lambda t: service(tournament=t), verb)

    @admin.action(description="Start the selected tournaments now")
    def start_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        self._control(request, queryset, tournament_start, "Started")

    @admin.action(description="Pause the selected tournaments")
    def pause_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        self._control(request, queryset, tournament_pause, "Paused")

    @admin.action(description="Resume the selected tournaments")
    def resume_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        self._control(request, queryset, tournament_resume, "Resumed")

    @admin.action(
        description="Cancel the selected tournaments and their queued matches "
        "(running ones play to the end and count)"
    )
    def cancel_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        self._control(request, queryset, tournament_cancel, "Cancelled")


@admin.register(TournamentEntry)
class TournamentEntryAdmin(admin.ModelAdmin):
    list_display = ["tournament", "bot", "created_at"]
    list_filter = ["tournament__status", "created_at"]
    search_fields = ["tournament__name", "bot__name"]
    list_select_related = ["tournament", "bot"]
    raw_id_fields = ["tournament", "bot"]
