"""Tournament endpoints: create, list, show, control, progress, standings and fixtures."""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import QuerySet
from django.http import HttpResponseBase, StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response

from tournaments.api.csv_export import (
    DOWNLOAD_CSV,
    STREAM_CHUNK,
    WITH_CSV,
    CSVDownloadNegotiation,
    CSVRenderer,
    NoFormatOverride,
    as_download,
    stream_match_rows,
)
from tournaments.api.filters import TournamentFilter
from tournaments.api.permissions import IsOrganiserOrReadOnly
from tournaments.api.serializers.matches import MatchOutput
from tournaments.api.serializers.tournaments import (
    ProgressOutput,
    StandingsOutput,
    TournamentDetailOutput,
    TournamentInput,
    TournamentOutput,
)
from tournaments.models import Tournament, signed_in
from tournaments.selectors.matches import tournament_fixture_seats, tournament_fixtures
from tournaments.selectors.tournaments import (
    tournament_detail_list,
    tournament_list,
    tournament_progress,
    tournament_standings,
)
from tournaments.services.tournaments import (
    tournament_cancel,
    tournament_create,
    tournament_pause,
    tournament_resume,
    tournament_start,
)


class IsTournamentOrganiserOrReadOnly(permissions.BasePermission):
    """Anyone may read; only the tournament's organiser, or staff, may control it."""

    message = "Only the tournament's organiser or staff may control it."

    def has_object_permission(self, request, view, obj: Tournament) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return bool(request.user.is_staff or obj.organiser_id == request.user.pk)


class FormatIsAFilterNegotiation(DefaultContentNegotiation):
    """Leave ``?format=`` to the tournament filter instead of reading it as a response format."""

    # DRF reads only URL_FORMAT_OVERRIDE from ``settings``; the stubs type the attribute as
    # the whole settings object.
    settings = NoFormatOverride  # type: ignore[assignment]


class TournamentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Tournaments. Anyone may browse; staff and organisers create; their organiser controls one."""

    permission_classes = [IsOrganiserOrReadOnly, IsTournamentOrganiserOrReadOnly]
    filterset_class = TournamentFilter
    ordering_fields = ["created_at", "name", "start_at", "started_at", "status"]
    ordering = ["-created_at", "-id"]
    lookup_value_regex = r"[0-9]+"
    throttle_scope = "writes"
    content_negotiation_class = FormatIsAFilterNegotiation

    def get_queryset(self) -> QuerySet[Tournament]:
        # Everything but the list loads one plain row; _detail loads the full picture.
        return tournament_list() if self.action == "list" else Tournament.objects.all()

    def get_serializer_class(self):
        return TournamentOutput if self.action == "list" else TournamentDetailOutput

    def _detail(self, pk: int, *, status_code: int = status.HTTP_200_OK) -> Response:
        tournament = tournament_detail_list().get(pk=pk)
        progress = tournament_progress(tournament=tournament).to_dict()
        context = {**self.get_serializer_context(), "progress": progress}
        return Response(
            TournamentDetailOutput(tournament, context=context).data, status=status_code
        )

    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        """Show a tournament with its entries and progress."""
        return self._detail(self.get_object().pk)

    @extend_schema(request=TournamentInput, responses={201: TournamentDetailOutput})
    def create(self, request: Request) -> Response:
        """Create a tournament (staff or organisers); scheduled when start_at is given."""
        data = TournamentInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        tournament = tournament_create(
            organiser=signed_in(request.user), bot_ids=fields.pop("bots"), **fields
        )
        return self._detail(tournament.pk, status_code=status.HTTP_201_CREATED)

    def _control(
        self, service: Callable[..., Tournament], status_code: int = status.HTTP_200_OK
    ) -> Response:
        tournament = service(tournament=self.get_object())
        return self._detail(tournament.pk, status_code=status_code)

    @extend_schema(request=None, responses={202: TournamentDetailOutput})
    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str | None = None) -> Response:
        """Start: 202 with the tournament `starting` while a worker generates and queues its
        fixtures, then `running` (organiser or staff; 409 unless draft/scheduled)."""
        return self._control(tournament_start, status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses=TournamentDetailOutput)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        """Stop starting this tournament's matches (organiser or staff; 409 unless running)."""
        return self._control(tournament_pause)

    @extend_schema(request=None, responses=TournamentDetailOutput)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        """Run a paused tournament again (organiser or staff; 409 unless paused)."""
        return self._control(tournament_resume)

    @extend_schema(request=None, responses=TournamentDetailOutput)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """Cancel the tournament and its queued matches (organiser or staff; 409 when ended):
        running matches play to the end, are recorded and rated."""
        return self._control(tournament_cancel)

    @extend_schema(responses=ProgressOutput)
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk: str | None = None) -> Response:
        """Matches done, running, queued and failed out of the total, with an estimated finish."""
        progress = tournament_progress(tournament=self.get_object())
        return Response(ProgressOutput(progress.to_dict()).data)

    @extend_schema(responses=StandingsOutput, parameters=[DOWNLOAD_CSV])
    @action(
        detail=True,
        methods=["get"],
        renderer_classes=WITH_CSV,
        content_negotiation_class=CSVDownloadNegotiation,
    )
    def standings(self, request: Request, pk: str | None = None) -> Response:
        """Standings from the finished matches, with the winners and whether first place is tied."""
        tournament = self.get_object()
        response = Response(tournament_standings(tournament=tournament))
        return as_download(request, response, f"tournament-{tournament.pk}-standings")

    @extend_schema(responses=MatchOutput(many=True), filters=False, parameters=[DOWNLOAD_CSV])
    @action(
        detail=True,
        methods=["get"],
        filterset_class=None,
        ordering_fields=[],
        renderer_classes=WITH_CSV,
        content_negotiation_class=CSVDownloadNegotiation,
    )
    def fixtures(self, request: Request, pk: str | None = None) -> HttpResponseBase:
        """The tournament's matches with their seats and status, by round, a page at a time.

        As CSV (``?download=csv``), every match of the tournament at once, a row per seat.
        """
        tournament = self.get_object()
        if request.accepted_renderer.format == CSVRenderer.format:
            # Every match at once, but a page size given is still checked, as for the JSON.
            self.paginator.get_page_size(request)  # type: ignore[union-attr]
            # Streamed from one cursor, so a tournament of any size is never held whole.
            seats = tournament_fixture_seats(tournament=tournament).iterator(
                chunk_size=STREAM_CHUNK
            )
            streamed = StreamingHttpResponse(
                stream_match_rows(seats), content_type="text/csv; charset=utf-8"
            )
            streamed["Content-Disposition"] = (
                f'attachment; filename="tournament-{tournament.pk}-matches.csv"'
            )
            return streamed
        matches = tournament_fixtures(tournament=tournament)
        page = self.paginate_queryset(matches)
        return self.get_paginated_response(MatchOutput(page, many=True).data)
