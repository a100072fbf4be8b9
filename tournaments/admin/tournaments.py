"""Tournaments and their entries in the admin."""

from __future__ import annotations

import copy
from typing import Any

from django import forms
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
from tournaments.models import Tournament, TournamentEntry, signed_in
from tournaments.models.competitions import format_help
from tournaments.selectors.tournaments import CountedTournament, tournament_list
from tournaments.services.tournaments import (
    tournament_cancel,
    tournament_create,
    tournament_pause,
    tournament_resume,
    tournament_start,
    tournament_update,
)


class EntryInline(ReadOnlyInline):
    """A tournament's entries, chosen when it is created (``tournament_create`` checks each
    owner's consent and each bot's status)."""

    model = TournamentEntry
    fields = readonly_fields = ("bot", "created_at")


# What staff fill in for a new tournament: tournament_create's arguments.
CREATE_FIELDS = [
    "name",
    "description",
    "variant",
    "format",
    "rated",
    "table_size",
    "time_limit_ms",
    "time_bank_ms",
    "rounds",
    "seed",
    "start_at",
]


class TournamentAddForm(ServiceForm):
    """A new tournament, made by ``tournament_create`` with the signed-in staff member as its
    organiser, as the API makes one."""

    bots = forms.CharField(
        help_text="The ids of the bots to enter, separated by commas; another owner's bot "
        "needs its owner's consent to invitations."
    )

    class Meta:
        model = Tournament
        fields = CREATE_FIELDS
        help_texts = {"format": format_help()}  # duplicate's deals come round again

    def clean_bots(self) -> list[int]:
        try:
            return [int(part) for part in self.cleaned_data["bots"].replace(" ", "").split(",")]
        except ValueError:
            raise forms.ValidationError("Give bot ids, e.g. 12, 15, 31.") from None

    def save_through(self, data: dict[str, Any]) -> Tournament:
        fields = {name: data[name] for name in CREATE_FIELDS}
        return tournament_create(
            organiser=signed_in(self.request.user), bot_ids=data["bots"], **fields
        )


class TournamentChangeForm(ServiceForm):
    """What may change once a tournament exists: its name and description
    (``tournament_update``); its status moves through the actions of the list."""

    class Meta:
        model = Tournament
        fields = ["name", "description"]

    def save_through(self, data: dict[str, Any]) -> Tournament:
        return tournament_update(
            tournament=copy.copy(self.instance), name=data["name"], description=data["description"]
        )


@admin.register(Tournament)
class TournamentAdmin(ServiceAdmin):
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
    readonly_fields = [
        "organiser",
        "status",
        "variant",
        "format",
        "rated",
        "table_size",
        "time_limit_ms",
        "time_bank_ms",
        "rounds",
        "games_per_fixture",
        "seed",
        "start_at",
        "created_at",
        "updated_at",
        "started_at",
        "progress",
    ]
    inlines = [EntryInline]
    actions = ["start_tournaments", "pause_tournaments", "resume_tournaments", "cancel_tournaments"]

    def get_readonly_fields(self, request: HttpRequest, obj: Tournament | None = None) -> list[str]:
        return list(self.readonly_fields) if obj is not None else []

    def get_form(
        self,
        request: HttpRequest,
        obj: Tournament | None = None,
        change: bool = False,
        **kwargs: Any,
    ) -> type[forms.ModelForm]:
        kwargs["form"] = TournamentChangeForm if obj is not None else TournamentAddForm
        return super().get_form(request, obj, change, **kwargs)

    def has_delete_permission(self, request: HttpRequest, obj: Tournament | None = None) -> bool:
        return False  # its matches and ratings keep it; cancel it instead

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
class TournamentEntryAdmin(ReadOnlyAdmin):
    list_display = ["tournament", "bot", "created_at"]
    list_filter = ["tournament__status", "created_at"]
    search_fields = ["tournament__name", "bot__name"]
    list_select_related = ["tournament", "bot"]
    raw_id_fields = ["tournament", "bot"]
