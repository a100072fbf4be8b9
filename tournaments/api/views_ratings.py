"""Rating endpoints: the leaderboard and its batch ranks, a bot's ratings and history, and
recomputing them all."""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, permissions, status
from rest_framework.exceptions import APIException
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.bodies import error_body
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
from tournaments.cache_keys import history_generation_key, leaderboard_generation_key
from tournaments.models import (
    Bot,
    RankInterval,
    Rating,
    RatingHistory,
    RatingRecompute,
    signed_in,
)
from tournaments.provisional import provisional_matches
from tournaments.selectors.rank_intervals import rank_intervals
from tournaments.selectors.ratings import (
    bot_ratings_now,
    bot_ratings_on,
    leaderboard_generation,
    leaderboard_pages,
    rating_history,
    recompute_state,
)
from tournaments.selectors.variants import MAX_ID
from tournaments.services.recompute import ratings_request_recompute

logger = logging.getLogger(__name__)
# How long a variant's generation is taken from the cache before it is read again: bounds how
# long a page can lag a rating write where the writer cannot reach this process's cache.
LEADERBOARD_GENERATION_SECONDS = 5

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

    # Pages are cached only for requests made of these parameters, so the links a cached
    # page carries (next, previous) are the ones any request with the same parameters gets.
    CACHED_PARAMETERS = frozenset({"variant", "include_provisional", "page", "page_size"})

    def _page_key(self, request: Request) -> str | None:
        """The cache key of the page these parameters ask for (None: not cached)."""
        params = request.query_params
        if not settings.LEADERBOARD_CACHE_SECONDS or not set(params) <= self.CACHED_PARAMETERS:
            return None
        if not isinstance(request.accepted_renderer, JSONRenderer):
            return None
        if len(params.get("variant", "")) > 64:
            return None
        parts = (
            request.get_host(),
            request.is_secure(),
            request.accepted_media_type,
            sorted(params.lists()),
            provisional_matches(),
        )
        return "ohhell:leaderboard:" + hashlib.sha256(repr(parts).encode()).hexdigest()

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
        page_key = self._page_key(request)
        generation_key = leaderboard_generation_key(request.query_params.get("variant", ""))
        generation = None
        if page_key is not None:
            recent = RECENT_PAGES.get(page_key)
            if recent is not None and recent.young():
                return HttpResponse(recent.body, content_type=request.accepted_media_type)
            found = _cache_get_many([page_key, generation_key])
            generation = found.get(generation_key)
            cached = found.get(page_key)
            if isinstance(cached, CachedPage) and cached.servable(generation):
                RECENT_PAGES.keep(page_key, cached)
                return HttpResponse(cached.body, content_type=request.accepted_media_type)
        query = LeaderboardQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        if page_key is not None and generation is None:
            generation = leaderboard_generation(variant_id=query.validated_data["variant"])
            _cache_set(generation_key, generation, LEADERBOARD_GENERATION_SECONDS)
        board = leaderboard_pages(
            variant_id=query.validated_data["variant"],
            include_provisional=query.validated_data["include_provisional"],
        )
        page = self.paginate_queryset(board)
        response = self.get_paginated_response(LeaderboardRowOutput(page, many=True).data)
        if page_key is not None and generation is not None:
            page_built = _keep_page(
                self, request, response, page_key, generation, settings.LEADERBOARD_CACHE_SECONDS
            )
            RECENT_PAGES.keep(page_key, page_built)
        return response


@dataclass(frozen=True, slots=True)
class CachedPage:
    """A leaderboard page as it was sent, the generation it was built from, and when."""

    generation: str
    built_at: float  # a Unix time: the processes sharing the cache share the clock
    body: str | bytes

    def servable(self, generation: str | None) -> bool:
        """Whether the page may answer now: built from ``generation`` (the current one, when
        known), or younger than LEADERBOARD_STALE_SECONDS."""
        if generation is not None and generation == self.generation:
            return True
        return self.young()

    def young(self) -> bool:
        """Whether the page was built less than LEADERBOARD_STALE_SECONDS ago."""
        return time.time() - self.built_at < settings.LEADERBOARD_STALE_SECONDS


class RecentPages:
    """The pages this process served lately, answered again without asking the shared cache
    while they are young (``CachedPage.young``): a rating write still shows within
    LEADERBOARD_STALE_SECONDS of it, and a hit costs no round trip to Redis."""

    SIZE = 256

    def __init__(self) -> None:
        self._pages: OrderedDict[str, CachedPage] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> CachedPage | None:
        with self._lock:
            return self._pages.get(key)

    def forget(self) -> None:
        """Drop every page (a test's database is not the one they were built from)."""
        with self._lock:
            self._pages.clear()

    def keep(self, key: str, page: CachedPage) -> None:
        if not settings.LEADERBOARD_STALE_SECONDS:
            return
        with self._lock:
            self._pages[key] = page
            self._pages.move_to_end(key)
            while len(self._pages) > self.SIZE:
                self._pages.popitem(last=False)


RECENT_PAGES = RecentPages()


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
            OpenApiParameter("variant", str, required=True, description="the variant's name or id")
        ]
    )
    def get(self, request: Request) -> Response:
        """The latest fit a page at a time, best rank first; empty before the first fit."""
        query = RankIntervalsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = self.paginate_queryset(rank_intervals(variant_id=query.validated_data["variant"]))
        return self.get_paginated_response(RankIntervalOutput(page, many=True).data)


def _cache_get_many(keys: list[str]) -> dict[str, Any]:
    """Read several keys at once (one round trip); an unreachable cache is a miss (logged)."""
    try:
        return cache.get_many(keys)
    except Exception:  # any backend's failure: serve from the database instead
        logger.warning("cache unavailable: reading the leaderboard from the database")
        return {}


def _keep_page(
    view: APIView,
    request: Request,
    response: Response,
    key: str,
    generation: str,
    timeout: int,
) -> CachedPage:
    """Keep a page in the cache as the JSON it is sent as, with the generation it was built
    from; return it."""
    body = request.accepted_renderer.render(
        response.data, request.accepted_media_type, view.get_renderer_context()
    )
    page = CachedPage(generation=generation, built_at=time.time(), body=body)
    _cache_set(key, page, timeout)
    return page


def _cache_set(key: str, value: Any, timeout: int) -> None:
    try:
        cache.set(key, value, timeout=timeout)
    except Exception:  # any backend's failure: the page was served, only not kept
        logger.warning("cache unavailable: leaderboard page not kept")


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


# How long a bot's history page may be kept, and a generation of its history lasts (which
# bounds how long a page can lag a rating write where the writer cannot reach this process's
# cache).
HISTORY_CACHE_SECONDS = 300
HISTORY_GENERATION_SECONDS = 5


class BotRatingHistoryView(generics.ListAPIView):
    """Every update of a bot's rating, oldest first, a page at a time."""

    serializer_class = RatingHistoryOutput
    filter_backends: list = []
    # As for the leaderboard: pages are cached only for requests made of these parameters.
    CACHED_PARAMETERS = frozenset({"variant", "at", "page", "page_size"})

    def _page_key(self, request: Request, pk: int) -> str | None:
        """The cache key of the page these parameters ask for (None: not cached)."""
        params = request.query_params
        if not set(params) <= self.CACHED_PARAMETERS:
            return None
        if not isinstance(request.accepted_renderer, JSONRenderer):
            return None
        if any(len(value) > 64 for value in params.values()):
            return None
        parts = (
            pk,
            request.get_host(),
            request.is_secure(),
            request.accepted_media_type,
            sorted(params.lists()),
        )
        return "ohhell:history-page:" + hashlib.sha256(repr(parts).encode()).hexdigest()

    def get_queryset(self) -> QuerySet[RatingHistory]:
        """Nothing: only the browsable API's filter form asks, and this view has no filters."""
        return RatingHistory.objects.none()

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
    # Pages are cached as the JSON bytes they were sent as (so this widens the return type),
    # each with the generation of the bot's history it was built under: a token kept for
    # HISTORY_GENERATION_SECONDS and dropped by each rating write of the bot, a recompute's
    # included. A page is served while its generation is current, at the cost of one cache
    # read and no query. The token is kept before the rows are read, so a page read before
    # a write commits never outlives the write's dropping of the token.
    def get(self, request: Request, pk: int) -> HttpResponse:  # type: ignore[override]
        """The bot's rating history: match, sequence, time, mu and sigma before and after."""
        _require_storable_id(pk)
        page_key = self._page_key(request, pk)
        generation_key = history_generation_key(pk)
        generation = None
        if page_key is not None:
            found = _cache_get_many([page_key, generation_key])
            generation = found.get(generation_key)
            cached = found.get(page_key)
            if (
                isinstance(cached, CachedPage)
                and generation is not None
                and cached.generation == generation
            ):
                return HttpResponse(cached.body, content_type=request.accepted_media_type)
        query = RatingHistoryQuery(data=request.query_params)
        with _unknown_bot_first(pk):
            query.is_valid(raise_exception=True)
        data = query.validated_data
        if page_key is not None and generation is None:
            generation = secrets.token_hex(8)
            _cache_set(generation_key, generation, HISTORY_GENERATION_SECONDS)
        updates = rating_history(bot_id=pk, variant_id=data["variant"], until=data["at"])
        with _unknown_bot_first(pk):
            page = self.paginate_queryset(updates)
        if not page:
            _require_bot(pk)
        response = self.get_paginated_response(RatingHistoryOutput(page, many=True).data)
        if page_key is not None and generation is not None:
            _keep_page(self, request, response, page_key, generation, HISTORY_CACHE_SECONDS)
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
