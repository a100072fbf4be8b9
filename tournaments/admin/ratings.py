"""Ratings, their history and recompute jobs in the admin."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from tournaments.admin.common import ReadOnlyAdmin, ServiceAdmin, ServiceForm
from tournaments.models import Rating, RatingHistory, RatingRecompute, signed_in
from tournaments.selectors.ratings import recompute_state
from tournaments.services.recompute import ratings_request_recompute


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin):
    list_display = ["bot", "variant", "mu", "sigma", "conservative", "matches", "updated_at"]
    list_filter = ["variant"]
    search_fields = ["bot__name"]
    list_select_related = ["bot", "variant"]
    readonly_fields = ["conservative", "updated_at"]
    raw_id_fields = ["bot"]


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


class RecomputeForm(ServiceForm):
    """A job has nothing to fill in: saving the empty form requests a recompute."""

    class Meta:
        model = RatingRecompute
        fields: list[str] = []

    def save_through(self, data: dict[str, Any]) -> RatingRecompute:
        return ratings_request_recompute(requested_by=signed_in(self.request.user)).job


@admin.register(RatingRecompute)
class RatingRecomputeAdmin(ServiceAdmin):
    """Recompute jobs; "Add" requests a new one (or shows the one already waiting)."""

    form = RecomputeForm

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

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def response_add(
        self, request: HttpRequest, obj: RatingRecompute, post_url_continue: str | None = None
    ) -> HttpResponse:
        return self._show(request, obj)

    def _request(self, request: HttpRequest) -> HttpResponse:
        return self._show(
            request, ratings_request_recompute(requested_by=signed_in(request.user)).job
        )

    def _show(self, request: HttpRequest, job: RatingRecompute) -> HttpResponse:
        self.message_user(request, f"Recompute {job.pk} is {job.status}.")
        url = reverse("admin:tournaments_ratingrecompute_change", args=[job.pk])
        return HttpResponseRedirect(url)

    @admin.action(description="Request a new recompute of every rating")
    def request_recompute(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse:
        return self._request(request)
