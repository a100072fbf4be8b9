"""Leaderboard and rating-history pages kept as the JSON they were sent as.

Each page is kept in the shared cache with the generation it was built from. A leaderboard's
generation is the time of the variant's latest rating write, cached for
LEADERBOARD_GENERATION_SECONDS and dropped by the rating writer; a page is served while its
generation is current, or for LEADERBOARD_STALE_SECONDS after it was built whatever was written
since, so a busy ladder's writes cost one rebuild per interval, not one per write. A leaderboard
page this process sent within that window of its building is sent again from its own memory
(``RECENT_PAGES``). A bot's history generation is a token kept for HISTORY_GENERATION_SECONDS and
dropped by each rating write of the bot, a recompute's included; it is kept before the rows are
read, so a page read before a write commits never outlives the write's dropping of the token.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.page_keys import is_decimal, is_flag, is_page_size, is_variant_ref, page_key
from tournaments.cache_keys import history_generation_key, leaderboard_generation_key
from tournaments.provisional import provisional_matches
from tournaments.selectors.ratings import leaderboard_generation

logger = logging.getLogger(__name__)
# How long a variant's generation is taken from the cache before it is read again: bounds how
# long a page can lag a rating write where the writer cannot reach this process's cache.
LEADERBOARD_GENERATION_SECONDS = 5
# How long a bot's history page may be kept, and a generation of its history lasts (which
# bounds how long a page can lag a rating write where the writer cannot reach this process's
# cache).
HISTORY_CACHE_SECONDS = 300
HISTORY_GENERATION_SECONDS = 5
# Pages are cached only for requests made of these parameters, each in its canonical form
# (tournaments/api/page_keys.py), so the links a cached page carries (next, previous) are the
# ones any request with the same parameters gets, and no client makes an entry per spelling. A
# history page at a free-form instant (``at``) or of another size than the default is read
# from the database every time: a bot's history is kept at most once per variant and page.
LEADERBOARD_FORMS = {
    "variant": is_variant_ref,
    "include_provisional": is_flag,
    "page": is_decimal,
    "page_size": is_page_size,
}
HISTORY_FORMS = {"variant": is_variant_ref, "page": is_decimal}


@dataclass(frozen=True, slots=True)
class CachedPage:
    """A page as it was sent, the generation it was built from, and when."""

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
    """The leaderboard pages this process served lately, answered again without asking the
    shared cache while they are young (``CachedPage.young``): a rating write still shows within
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


@dataclass(frozen=True, slots=True)
class Lookup:
    """What the caches held for a page: its body when it may answer, and the generation read."""

    body: str | bytes | None
    generation: str | None


def leaderboard_page_key(request: Request) -> str | None:
    """The cache key of the leaderboard page these parameters ask for (None: not cached)."""
    if not settings.LEADERBOARD_CACHE_SECONDS:
        return None
    scope = (provisional_matches(),)
    return page_key(request, kind="leaderboard", scope=scope, forms=LEADERBOARD_FORMS)


def leaderboard_lookup(request: Request, page_key: str) -> Lookup:
    """A leaderboard page from this process's memory while young, else from the shared cache
    while servable (one read, with the variant's generation)."""
    recent = RECENT_PAGES.get(page_key)
    if recent is not None and recent.young():
        return Lookup(body=recent.body, generation=recent.generation)
    generation_key = _leaderboard_generation_key(request)
    found = _cache_get_many([page_key, generation_key])
    generation = found.get(generation_key)
    cached = found.get(page_key)
    if isinstance(cached, CachedPage) and cached.servable(generation):
        RECENT_PAGES.keep(page_key, cached)
        return Lookup(body=cached.body, generation=generation)
    return Lookup(body=None, generation=generation)


def leaderboard_generation_kept(request: Request, *, variant_id: int) -> str:
    """The variant's generation read from the database, and kept in the cache a while."""
    generation = leaderboard_generation(variant_id=variant_id)
    _cache_set(_leaderboard_generation_key(request), generation, LEADERBOARD_GENERATION_SECONDS)
    return generation


def keep_leaderboard_page(
    view: APIView, request: Request, response: Response, page_key: str, generation: str
) -> None:
    """Keep a leaderboard page in the shared cache and in this process's memory."""
    page = _keep_page(
        view, request, response, page_key, generation, settings.LEADERBOARD_CACHE_SECONDS
    )
    RECENT_PAGES.keep(page_key, page)


def _leaderboard_generation_key(request: Request) -> str:
    return leaderboard_generation_key(request.query_params.get("variant", ""))


def history_page_key(request: Request, bot_id: int) -> str | None:
    """The cache key of the bot's history page these parameters ask for (None: not cached)."""
    return page_key(request, kind="history-page", scope=(bot_id,), forms=HISTORY_FORMS)


def history_lookup(page_key: str, bot_id: int) -> Lookup:
    """A history page from the shared cache while its generation is current (one read)."""
    generation_key = history_generation_key(bot_id)
    found = _cache_get_many([page_key, generation_key])
    generation = found.get(generation_key)
    cached = found.get(page_key)
    if (
        isinstance(cached, CachedPage)
        and generation is not None
        and cached.generation == generation
    ):
        return Lookup(body=cached.body, generation=generation)
    return Lookup(body=None, generation=generation)


def history_generation_kept(bot_id: int) -> str:
    """A new generation of the bot's history, kept in the cache a while."""
    generation = secrets.token_hex(8)
    _cache_set(history_generation_key(bot_id), generation, HISTORY_GENERATION_SECONDS)
    return generation


def keep_history_page(
    view: APIView, request: Request, response: Response, page_key: str, generation: str
) -> None:
    """Keep a history page in the shared cache."""
    _keep_page(view, request, response, page_key, generation, HISTORY_CACHE_SECONDS)


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
