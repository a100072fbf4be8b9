"""Rating endpoints: the leaderboard, a bot's ratings and history, and recomputing them all."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, permissions, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.bodies import error_body
from tournaments.api.serializers_competitions import (
    BotRatingOutput,
    BotRatingsQuery,
    LeaderboardQuery,
    LeaderboardRowOutput,
    RatingHistoryOutput,
    RatingHistoryQuery,
    RecomputeConflictOutput,
    RecomputeOutput,
)
from tournaments.models import Bot, Rating, RatingHistory, RatingRecompute, signed_in
from tournaments.selectors.ratings import (
    bot_ratings,
    bot_ratings_on,
    leaderboard,
    rating_history,
    recompute_state,
)
from tournaments.services.ratings import ratings_request_recompute

AT_PARAMETER = OpenApiParameter(
    "at", OpenApiTypes.DATETIME, description="an ISO 8601 instant: the ratings as they stood then"
)


class LeaderboardView(generics.ListAPIView):
    """One variant's leaderboard by conservative rating (mu - 3 sigma), best first."""

    serializer_class = LeaderboardRowOutput
    filter_backends: list = []

    def get_queryset(self) -> QuerySet[Rating]:
        query = LeaderboardQuery(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return leaderboard(**query.validated_data)

    @extend_schema(
        parameters=[
            OpenApiParameter("variant", str, required=True, description="the variant's name or id"),
            OpenApiParameter(
                "include_provisional",
                bool,
                description="false hides bots with too few rated matches (default true)",
            ),
        ]
    )
    def get(self, request: Request) -> Response:
        """The leaderboard a page at a time; rank counts from the top of the whole board."""
        page = self.paginate_queryset(self.get_queryset())
        paginator = self.paginator
        # The view's pagination is the page-number kind set in config/settings.py.
        if page is None or not isinstance(paginator, PageNumberPagination) or not paginator.page:
            raise TypeError("the leaderboard needs page-number pagination")
        first = paginator.page.start_index()
        for offset, rating in enumerate(page):
            rating.rank = first + offset
        return self.get_paginated_response(LeaderboardRowOutput(page, many=True).data)


class BotRatingsView(APIView):
    """A bot's rating in every variant it has played."""

    @extend_schema(parameters=[AT_PARAMETER], responses=BotRatingOutput(many=True))
    def get(self, request: Request, pk: int) -> Response:
        """The bot's ratings now, or as they stood at ``?at=``."""
        bot = get_object_or_404(Bot.objects.only("pk"), pk=pk)
        query = BotRatingsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        when = query.validated_data["at"]
        if when is None:
            rows = [BotRatingOutput.from_rating(r) for r in bot_ratings(bot_id=bot.pk)]
        else:
            rows = bot_ratings_on(bot_id=bot.pk, when=when)
        return Response(BotRatingOutput(rows, many=True).data)


class BotRatingHistoryView(generics.ListAPIView):
    """Every update of a bot's rating, oldest first, a page at a time."""

    serializer_class = RatingHistoryOutput
    filter_backends: list = []

    def get_queryset(self) -> QuerySet[RatingHistory]:
        bot = get_object_or_404(Bot.objects.only("pk"), pk=self.kwargs["pk"])
        query = RatingHistoryQuery(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        return rating_history(bot_id=bot.pk, variant=data["variant"], until=data["at"])

    @extend_schema(
        parameters=[
            OpenApiParameter("variant", str, description="only this variant (name or id)"),
            OpenApiParameter(
                "at",
                OpenApiTypes.DATETIME,
                description="only updates up to this instant: the last is the rating then",
            ),
        ]
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        """The bot's rating history: match, sequence, time, mu and sigma before and after."""
        return super().get(request, *args, **kwargs)


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
