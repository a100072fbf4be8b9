"""Rating endpoints: the leaderboard and its batch ranks, a bot's ratings and history, and
recomputing them all."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, permissions, status
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.bodies import error_body
from tournaments.api.page_cache import (
    history_generation_kept,
    history_lookup,
    history_page_key,
    keep_history_page,
    keep_leaderboard_page,
    leaderboard_generation_kept,
    leaderboard_lookup,
    leaderboard_page_key,
)
from tournaments.api.serializers.rank_intervals import RankIntervalOutput, RankIntervalsQuery
from tournaments.api.serializers.ratings import (
    BotRatingOutput,
    BotRatingsQuery,
    LeaderboardQuery,
    LeaderboardRowOutput,
    RatingHistoryOutput,
    RatingHistoryQuery,
    RecomputeConflictOutput,
    RecomputeOutput,
)
from tournaments.models import (
    Bot,
    RankInterval,
    Rating,
    RatingHistory,
    RatingRecompute,
    signed_in,
)
from tournaments.selectors.rank_intervals import rank_intervals
from tournaments.selectors.ratings import (
    bot_ratings_now,
    bot_ratings_on,
    leaderboard_pages,
    rating_history,
    recompute_state,
)
from tournaments.selectors.variants import MAX_ID
from tournaments.services.recompute import ratings_request_recompute

# A variant's name or id in the query: never empty.
VARIANT_REF = {"type": "string", "minLength": 1}
AT_PARAMETER = OpenApiParameter(
    "at", OpenApiTypes.DATETIME, description="an ISO 8601 instant: the ratings as they stood then"
)


class LeaderboardView(generics.ListAPIView):
    """One variant's leaderboard by conservative rating (mu - 3 sigma), best first."""

    serializer_class = LeaderboardRowOutput
    filter_backends: list = []

    def get_queryset(self) -> QuerySet[Rating]:
        """Nothing: only the browsable API's filter form asks, and this view has no filters."""
        return Rating.objects.none()

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "variant", VARIANT_REF, required=True, description="the variant's name or id"
            ),
            OpenApiParameter(
                "include_provisional",
                bool,
                description="false hides bots with too few rated matches (default true)",
            ),
        ]
    )
    # A cached page is answered as the JSON bytes it was first sent as (a plain HttpResponse),
    # so this widens ListAPIView's return type to any HttpResponse.
    def get(self, request: Request) -> HttpResponse:  # type: ignore[override]
        """The leaderboard a page at a time; rank counts from the top of the whole board.

        Pages are cached as the JSON they were sent as, each with the variant's generation it
        was built from (the time of its latest rating write, itself cached for
        LEADERBOARD_GENERATION_SECONDS and dropped by the rating writer) and when: a page is
        served while its generation is current, or for LEADERBOARD_STALE_SECONDS after it was
        built whatever was written since, so a busy ladder's writes cost one rebuild per
        interval, not one per write. A page this process sent within that window of its
        building is sent again from its own memory; any other hit costs one cache read and no
        query. Without the cache a page is read through the board's index: its ids first, then
        only its rows.
        """
        page_key = leaderboard_page_key(request)
        generation = None
        if page_key is not None:
            found = leaderboard_lookup(request, page_key)
            if found.body is not None:
                return HttpResponse(found.body, content_type=request.accepted_media_type)
            generation = found.generation
        query = LeaderboardQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        variant_id = query.validated_data["variant"]
        if page_key is not None and generation is None:
            generation = leaderboard_generation_kept(request, variant_id=variant_id)
        board = leaderboard_pages(
            variant_id=variant_id,
            include_provisional=query.validated_data["include_provisional"],
        )
        page = self.paginate_queryset(board)
        response = self.get_paginated_response(LeaderboardRowOutput(page, many=True).data)
        if page_key is not None and generation is not None:
            keep_leaderboard_page(self, request, response, page_key, generation)
        return response


class LeaderboardIntervalsView(generics.ListAPIView):
    """One variant's bots ranked by the batch fit of its rated matches, each with the ranks
    90% of the refits on resampled matches gave it."""

    serializer_class = RankIntervalOutput
    filter_backends: list = []

    def get_queryset(self) -> QuerySet[RankInterval]:
        """Nothing: only the browsable API's filter form asks, and this view has no filters."""
        return RankInterval.objects.none()

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "variant", VARIANT_REF, required=True, description="the variant's name or id"
            )
        ]
    )
    def get(self, request: Request) -> Response:
        """The latest fit a page at a time, best rank first; empty before the first fit."""
        query = RankIntervalsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = self.paginate_queryset(rank_intervals(variant_id=query.validated_data["variant"]))
        return self.get_paginated_response(RankIntervalOutput(page, many=True).data)


class BotRatingsView(APIView):
    """A bot's rating in every variant it has played."""

    @extend_schema(parameters=[AT_PARAMETER], responses=BotRatingOutput(many=True))
    def get(self, request: Request, pk: int) -> Response:
        """The bot's ratings now, or as they stood at ``?at=``."""
        _require_storable_id(pk)
        query = BotRatingsQuery(data=request.query_params)
        with _unknown_bot_first(pk):
            query.is_valid(raise_exception=True)
        when = query.validated_data["at"]
        rows = bot_ratings_now(bot_id=pk) if when is None else bot_ratings_on(bot_id=pk, when=when)
        if not rows:
            _require_bot(pk)
        return Response(BotRatingOutput(rows, many=True).data)


class BotRatingHistoryView(generics.ListAPIView):
    """Every update of a bot's rating, oldest first, a page at a time."""

    serializer_class = RatingHistoryOutput
    filter_backends: list = []

    def get_queryset(self) -> QuerySet[RatingHistory]:
        """Nothing: only the browsable API's filter form asks, and this view has no filters."""
        return RatingHistory.objects.none()

    @extend_schema(
        parameters=[
            OpenApiParameter("variant", VARIANT_REF, description="only this variant (name or id)"),
            OpenApiParameter(
                "at",
                OpenApiTypes.DATETIME,
                description="only updates up to this instant: the last is the rating then",
            ),
        ]
    )
    # Pages are cached as the JSON bytes they were sent as (so this widens the return type),
    # while the bot's history has not been written since (tournaments/api/page_cache.py). The
    # generation is kept before the rows are read, so a page read before a write commits never
    # outlives the write's dropping of it.
    def get(self, request: Request, pk: int) -> HttpResponse:  # type: ignore[override]
        """The bot's rating history: match, sequence, time, mu and sigma before and after."""
        _require_storable_id(pk)
        page_key = history_page_key(request, pk)
        generation = None
        if page_key is not None:
            found = history_lookup(page_key, pk)
            if found.body is not None:
                return HttpResponse(found.body, content_type=request.accepted_media_type)
            generation = found.generation
        query = RatingHistoryQuery(data=request.query_params)
        with _unknown_bot_first(pk):
            query.is_valid(raise_exception=True)
        data = query.validated_data
        if page_key is not None and generation is None:
            generation = history_generation_kept(pk)
        updates = rating_history(bot_id=pk, variant_id=data["variant"], until=data["at"])
        with _unknown_bot_first(pk):
            page = self.paginate_queryset(updates)
        if not page:
            _require_bot(pk)
        response = self.get_paginated_response(RatingHistoryOutput(page, many=True).data)
        if page_key is not None and generation is not None:
            keep_history_page(self, request, response, page_key, generation)
        return response


def _require_bot(pk: int) -> None:
    """A 404 unless the bot exists.

    A bot's ratings and history are read by its id alone, and the bot itself only when they
    come out empty or the request fails: a known bot's answer costs no query for the bot, and
    an unknown bot is a 404 whatever else the request asks.
    """
    get_object_or_404(Bot.objects.only("pk"), pk=pk)


def _require_storable_id(pk: int) -> None:
    """The 404 of an unknown bot for an id past any the database holds, before a query sees it
    (SQLite refuses such a number outright)."""
    if pk > MAX_ID:
        get_object_or_404(Bot.objects.none(), pk=pk)


@contextmanager
def _unknown_bot_first(pk: int) -> Iterator[None]:
    """Let an unknown bot's 404 come before any other error raised inside."""
    try:
        yield
    except APIException:
        _require_bot(pk)
        raise


class RecomputeView(APIView):
    """Rebuild every rating from the stored results in the background (staff only)."""

    permission_classes = [permissions.IsAdminUser]
    throttle_scope = "writes"

    @extend_schema(request=None, responses={202: RecomputeOutput, 409: RecomputeConflictOutput})
    def post(self, request: Request) -> Response:
        """Queue a recompute (202), or name the one already queued or running (409); at once."""
        request.data  # noqa: B018 - parsing refuses a malformed body rather than ignore it
        job, created = ratings_request_recompute(requested_by=signed_in(request.user))
        state = RecomputeOutput(recompute_state(job=job)).data
        if created:
            return Response(state, status=status.HTTP_202_ACCEPTED)
        message = (
            f"recompute {job.pk} is already {job.status}; follow it at /api/ratings/recompute/"
            f"{job.pk}/"
        )
        body = error_body("conflict", message, {"recompute": state})
        return Response(body, status=status.HTTP_409_CONFLICT)


class RecomputeDetailView(APIView):
    """A recompute's progress (staff only)."""

    permission_classes = [permissions.IsAdminUser]

    @extend_schema(responses=RecomputeOutput)
    def get(self, request: Request, pk: int) -> Response:
        """The job's status, with live progress while it runs."""
        job = get_object_or_404(RatingRecompute, pk=pk)
        return Response(RecomputeOutput(recompute_state(job=job)).data)
