"""Admin for every model: what staff and organisers need to look after bots and matches."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django import forms
from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from engine.errors import InvalidVariantError
from tournaments.errors import ApplicationError
from tournaments.models import (
    Bot,
    BotHealthCheck,
    CollusionFlag,
    CollusionScan,
    ConfirmedEmail,
    Ladder,
    Match,
    MatchSeat,
    Rating,
    RatingHistory,
    RatingRecompute,
    Replay,
    Scrimmage,
    ScrimmageOpponent,
    SeatFault,
    SharedHost,
    Tournament,
    TournamentEntry,
    TournamentStatus,
    Variant,
    VoidedDeal,
    signed_in,
)
from tournaments.models.competitions import format_help
from tournaments.selectors.ratings import recompute_state
from tournaments.selectors.tournaments import CountedTournament, tournament_list
from tournaments.services.bots import bot_disable, bot_enable, bot_verify_request
from tournaments.services.ladders import ladder_pause, ladder_resume
from tournaments.services.matches import match_retry
from tournaments.services.recompute import ratings_request_recompute
from tournaments.services.tournaments import (
    tournament_cancel,
    tournament_pause,
    tournament_resume,
    tournament_start,
)

# The admin's "View site" link opens the dashboard.
admin.site.site_url = "/"


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by the services: staff look, never edit."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


Row = TypeVar("Row", bound=Model)


def _apply_each(
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
        _apply_each(self, request, rows, lambda t: service(tournament=t), verb)

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
        _apply_each(self, request, rows, lambda ladder: service(ladder=ladder), verb)

    @admin.action(description="Pause the selected ladders")
    def pause_ladders(self, request: HttpRequest, queryset: QuerySet[Ladder]) -> None:
        self._control(request, queryset, ladder_pause, "Paused")

    @admin.action(description="Resume the selected ladders")
    def resume_ladders(self, request: HttpRequest, queryset: QuerySet[Ladder]) -> None:
        self._control(request, queryset, ladder_resume, "Resumed")


class ScrimmageOpponentInline(admin.TabularInline):
    model = ScrimmageOpponent
    extra = 0
    can_delete = False
    fields = readonly_fields = ("position", "bot")

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Scrimmage)
class ScrimmageAdmin(ReadOnlyAdmin):
    """Owners' unrated practice: staff see every scrimmage, as its owner does."""

    list_display = ["id", "owner", "bot", "variant", "match_count", "seed", "created_at"]
    list_filter = ["variant", "created_at"]
    search_fields = ["=id", "owner__username", "bot__name"]
    list_select_related = ["owner", "bot", "variant"]
    inlines = [ScrimmageOpponentInline]


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
    can_delete = False
    fields = readonly_fields = (
        "seat",
        "bot",
        "score",
        "rank",
        "bids_exact",
        "bids_total",
        "exact_bid_rate",
        "faults",
        "disqualified",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[MatchSeat]:
        return super().get_queryset(request).select_related("bot")

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class VoidedDealInline(admin.TabularInline):
    model = VoidedDeal
    extra = 0
    can_delete = False
    fields = readonly_fields = ("voided_at", "reason", "seed")

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "tournament",
        "ladder",
        "scrimmage",
        "variant",
        "round",
        "status",
        "attempts",
        "rated",
        "claimed_by",
        "duration",
    ]
    list_filter = [
        "status",
        "rated",
        "variant",
        ("tournament", admin.RelatedOnlyFieldListFilter),
    ]
    search_fields = ["=id", "tournament__name", "duplicate_group", "claimed_by", "error"]
    list_select_related = ["tournament", "ladder__variant", "scrimmage", "variant"]
    # The deal and its rules are committed before play (the seed's commitment is published):
    # staff retry or cancel a match, they never change what it deals.
    readonly_fields = [
        "seed",
        "variant",
        "duplicate_group",
        "time_limit_ms",
        "time_bank_ms",
        "created_at",
        "updated_at",
        "claimed_at",
        "heartbeat_at",
        "started_at",
        "rated_at",
        "rating_sequence",
        "duration",
    ]
    raw_id_fields = ["tournament", "ladder"]
    inlines = [SeatInline, VoidedDealInline]
    actions = ["retry_failed_matches"]

    @admin.action(description="Retry the selected failed matches (attempts reset)")
    def retry_failed_matches(self, request: HttpRequest, queryset: QuerySet[Match]) -> None:
        _apply_each(self, request, queryset, lambda m: match_retry(match=m), "Queued again")

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
class SeatFaultAdmin(ReadOnlyAdmin):
    list_display = ["seat", "kind", "count", "latency_ms", "sample"]
    list_filter = ["kind"]
    search_fields = ["seat__bot__name"]
    list_select_related = ["seat__bot", "seat__match"]
    raw_id_fields = ["seat"]


@admin.register(Replay)
class ReplayAdmin(ReadOnlyAdmin):
    list_display = ["match", "format_version", "created_at"]
    list_filter = ["format_version", "created_at"]
    search_fields = ["=match__id"]
    list_select_related = ["match"]
    raw_id_fields = ["match"]
    readonly_fields = ["created_at"]


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin):
    list_display = ["bot", "variant", "mu", "sigma", "conservative", "matches", "updated_at"]
    list_filter = ["variant"]
    search_fields = ["bot__name"]
    list_select_related = ["bot", "variant"]
    readonly_fields = ["conservative", "updated_at"]
    raw_id_fields = ["bot"]


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


@admin.register(RatingHistory)
class RatingHistoryAdmin(ReadOnlyAdmin):
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
    list_select_related = ["bot", "variant", "match"]
    raw_id_fields = ["bot", "match"]
    readonly_fields = ["at"]


@admin.register(RatingRecompute)
class RatingRecomputeAdmin(ReadOnlyAdmin):
    """Recompute jobs; "Add" requests a new one, since a job has nothing to fill in."""

    list_display = ["id", "status", "live_progress", "requested_by", "created_at", "finished_at"]
    list_filter = ["status", "created_at"]
    search_fields = ["=id", "requested_by__username", "error"]
    list_select_related = ["requested_by"]
    fields = readonly_fields = (
        "status",
        "live_progress",
        "requested_by",
        "error",
        "created_at",
        "started_at",
        "finished_at",
    )
    actions = ["request_recompute"]

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_staff

    @admin.display(description="progress")
    def live_progress(self, job: RatingRecompute) -> str:
        state = recompute_state(job=job)
        return f"{state['done']}/{state['total']} ({state['percent']}%)"

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context=None
    ) -> HttpResponse:
        """Show the empty job form; saving it queues a recompute through the service."""
        if request.method == "POST":
            return self._request(request)
        return super().add_view(request, form_url, extra_context)

    def _request(self, request: HttpRequest) -> HttpResponse:
        job = ratings_request_recompute(requested_by=signed_in(request.user)).job
        self.message_user(request, f"Recompute {job.pk} is {job.status}.")
        url = reverse("admin:tournaments_ratingrecompute_change", args=[job.pk])
        return HttpResponseRedirect(url)

    @admin.action(description="Request a new recompute of every rating")
    def request_recompute(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse:
        return self._request(request)


class CollusionFlagInline(admin.TabularInline):
    model = CollusionFlag
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "beneficiary",
        "partner",
        "tables",
        "beneficiary_with",
        "beneficiary_without",
        "partner_with",
        "partner_without",
        "lift",
        "drop",
        "z",
        "p_value",
        "adjusted_p",
    )

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(CollusionScan)
class CollusionScanAdmin(ReadOnlyAdmin):
    """Each variant's latest collusion scan with the pairs it flagged (docs/tournaments.md)."""

    list_display = ["variant", "matches", "pairs_tested", "flagged", "scanned_at"]
    list_select_related = ["variant"]
    search_fields = ["variant__name"]
    fields = readonly_fields = (
        "variant",
        "matches",
        "pairs_tested",
        "min_tables",
        "false_discovery_rate",
        "scanned_at",
    )
    inlines = [CollusionFlagInline]

    @admin.display(description="pairs flagged")
    def flagged(self, scan: CollusionScan) -> int:
        return scan.flags.count()


@admin.register(CollusionFlag)
class CollusionFlagAdmin(ReadOnlyAdmin):
    """Every flagged pair of the latest scans, strongest evidence first."""

    list_display = [
        "beneficiary",
        "partner",
        "variant",
        "tables",
        "beneficiary_with",
        "beneficiary_without",
        "partner_with",
        "partner_without",
        "adjusted_p",
    ]
    list_filter = ["scan__variant"]
    list_select_related = ["beneficiary", "partner", "scan__variant"]
    search_fields = ["beneficiary__name", "partner__name"]

    @admin.display(description="variant")
    def variant(self, flag: CollusionFlag) -> str:
        return str(flag.scan.variant)
