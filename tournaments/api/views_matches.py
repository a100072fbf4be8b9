"""Match endpoints: list, show one with per-seat results and faults, download the replay."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse, HttpResponseBase
from django.middleware.gzip import GZipMiddleware
from django.utils.cache import get_conditional_response, patch_cache_control
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from engine.seeds import seed_sha256
from tournaments.api.csv_export import (
    DOWNLOAD_CSV,
    WITH_CSV,
    CSVDownloadNegotiation,
    as_download,
)
from tournaments.api.filters import MatchFilter
from tournaments.api.serializers.matches import MatchDetailOutput, MatchOutput
from tournaments.models import Match, MatchStatus, Replay
from tournaments.selectors.matches import (
    match_detail_list,
    match_list,
    match_replay_id,
    matches_visible_to,
)

# How long a finished match's replay may be kept by a browser or a proxy: it never changes.
REPLAY_MAX_AGE_S = 86400


class MatchViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Matches: anyone may browse results, faults and replays; a scrimmage's matches only its
    owner and staff (the list never shows them: its scrimmage does)."""

    filterset_class = MatchFilter
    ordering_fields = ["created_at", "finished_at", "id", "round"]
    ordering = ["-created_at", "-id"]
    lookup_value_regex = r"[0-9]+"
    # Set for the replay (tournaments/api/throttling.py counts it as a download).
    counts_as_download = False

    def get_queryset(self) -> QuerySet[Match]:
        if self.action == "list":
            return match_list()
        visible = matches_visible_to(self.request.user)
        if self.action == "retrieve":
            return match_detail_list().filter(visible)
        return Match.objects.filter(visible)

    content_negotiation_class = CSVDownloadNegotiation

    def get_renderers(self) -> list[BaseRenderer]:
        # The list also downloads as CSV (?download=csv), a row per seat.
        if self.action == "list":
            return [renderer() for renderer in WITH_CSV]
        return super().get_renderers()

    @extend_schema(parameters=[DOWNLOAD_CSV])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Matches, newest first, a page at a time; as CSV with ``?download=csv``."""
        return as_download(request, super().list(request, *args, **kwargs), "matches")

    def get_serializer_class(self):
        return MatchDetailOutput if self.action == "retrieve" else MatchOutput

    @extend_schema(
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="the replay, as a JSON download"),
            404: OpenApiResponse(description="no such match, or no replay yet"),
        }
    )
    @action(detail=True, methods=["get"], counts_as_download=True)
    def replay(self, request: Request, pk: str | None = None) -> HttpResponseBase:
        """Download the match's replay: every deal, bid and card, enough to replay the game, and
        the seed's commitment; there is none until the match's seed is revealed.

        Compressed (gzip) when the client accepts it; a finished match's replay never changes,
        so it may be cached, and a client that sends back its ETag gets 304."""
        match = self.get_object()
        replay_id = match_replay_id(match=match)
        if replay_id is None:
            raise exceptions.NotFound(f"Match {match.pk} has no replay yet ({match.status}).")
        # Weak: the same replay compressed or not is the same JSON.
        etag = f'W/"match-{match.pk}-replay-{replay_id}"'
        not_modified = get_conditional_response(request, etag=etag)
        if not_modified is None:
            data = Replay.objects.filter(pk=replay_id).values_list("data", flat=True)[0]
            # The commitment travels with the record, so `ohhell verify` checks the seed.
            payload = {**data, "seed_sha256": seed_sha256(match.seed)}
            response = HttpResponse(JSONRenderer().render(payload), content_type="application/json")
            filename = f"ohhell-match-{match.pk}.json"
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
        else:
            response = not_modified
        response["ETag"] = etag
        if match.scrimmage_id is not None:
            # Its owner's and staff's only: no shared cache may keep it.
            patch_cache_control(response, private=True, no_cache=True)
        elif match.status == MatchStatus.FINISHED:
            patch_cache_control(response, public=True, max_age=REPLAY_MAX_AGE_S)
        else:
            patch_cache_control(response, no_cache=True)
        # A replay holds no secret, so compressing it gives nothing away (BREACH).
        return GZipMiddleware(lambda _: response).process_response(request, response)
