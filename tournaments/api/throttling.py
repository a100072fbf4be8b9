"""Throttle writes, and the few reads that are heavy to answer (downloads)."""

from __future__ import annotations

import ipaddress
import logging
import math
from enum import StrEnum
from typing import TYPE_CHECKING

from django.http import HttpRequest
from redis.exceptions import RedisError
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle

from tournaments.api.pagination import PageNumberPagination
from tournaments.client_address import client_address

if TYPE_CHECKING:
    # rest_framework.views reads the throttle classes of the settings, this module, on import.
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# One IPv6 host is usually given a whole /64 to pick addresses from: it is counted as one.
IPV6_CLIENT_PREFIX = 64


def retry_after_seconds(wait: float | None) -> int:
    """The whole seconds a 429 tells the client to wait (``Retry-After``): at least 1."""
    return max(1, math.ceil(wait or 0))


def throttle_ident(address: str) -> str:
    """What one client is counted as: its address, or its /64 when that is IPv6."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/{IPV6_CLIENT_PREFIX}", strict=False))
    return address


class TooMany(StrEnum):
    """Why a request got 429: the error code the API answers."""

    THROTTLED = "throttled"
    LOCKED_OUT = "locked_out"


_TOO_MANY_WORDS = {
    TooMany.THROTTLED: "Too many requests",
    TooMany.LOCKED_OUT: "Too many sign-in attempts for this account",
}


def too_many_message(reason: TooMany, seconds: int) -> str:
    """What a 429 says, in the API's error body and on the pages alike."""
    return f"{_TOO_MANY_WORDS[reason]}; try again in {seconds} s."


class AccountLockedOut(Throttled):
    """Too many sign-in attempts of one account (tournaments/lockout.py)."""

    default_code = TooMany.LOCKED_OUT.value


class WriteRateThrottle(ScopedRateThrottle):
    """Count only writes, per user (or per address when anonymous), by the view's scope.

    A view's ``throttle_scope`` picks the rate; views without one use the ``writes`` rate.
    The address is the client's by tournaments/client_address.py, never a header the client
    wrote itself. The counts live in the shared cache (Redis); while it cannot be reached,
    writes are let through unthrottled and logged, rather than failed.
    """

    def get_ident(self, request) -> str:
        return throttle_ident(client_address(request))

    def allow_request(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        if not getattr(view, "throttle_scope", None):
            view.throttle_scope = "writes"
        try:
            return super().allow_request(request, view)
        except RedisError as exc:
            logger.warning("write throttle skipped, the cache is unreachable: %s", exc)
            return True


# The attribute an endpoint sets (``@action(..., counts_as_download=True)``) when every answer
# of it is heavy to make, as a replay is.
COUNTS_AS_DOWNLOAD = "counts_as_download"


def is_download(request: Request, view: APIView) -> bool:
    """Whether a read is heavy to answer: a CSV download, an endpoint marked as a download (a
    replay), or a page larger than the default size."""
    if request.method not in SAFE_METHODS:
        return False
    if getattr(view, COUNTS_AS_DOWNLOAD, False):
        return True
    renderer = getattr(request, "accepted_renderer", None)
    if renderer is not None and renderer.format == "csv":
        return True
    asked = request.query_params.get(PageNumberPagination.page_size_query_param, "")
    return asked.isdigit() and int(asked) > (api_settings.PAGE_SIZE or 0)


class DownloadRateThrottle(SimpleRateThrottle):
    """Count heavy reads (``is_download``) per client address, signed in or not, at the
    ``downloads`` rate, so one client pulling exports, replays or large pages in a loop cannot
    take the workers from everyone else. Requests are counted, whatever their size. While the
    cache cannot be reached they are let through and logged, as writes are."""

    scope = "downloads"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        if not is_download(request, view):
            return None
        return self.cache_format % {
            "scope": self.scope,
            "ident": throttle_ident(client_address(request)),
        }

    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            return super().allow_request(request, view)
        except RedisError as exc:
            logger.warning("download throttle skipped, the cache is unreachable: %s", exc)
            return True


class _MailThrottle(SimpleRateThrottle):
    """Writes that mail a confirmation link, counted at the ``email`` rate; while the cache
    cannot be reached they are let through and logged, as writes are."""

    scope = "email"

    def ident(self, request: Request) -> str:
        """Who one count belongs to."""
        raise NotImplementedError

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        if request.method in SAFE_METHODS:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.ident(request)}

    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            return super().allow_request(request, view)
        except RedisError as exc:
            logger.warning("mail throttle skipped, the cache is unreachable: %s", exc)
            return True


class MailPerAccountThrottle(_MailThrottle):
    """Confirmation mails of one account, whatever address asks."""

    def ident(self, request: Request) -> str:
        return f"account-{request.user.pk}"


class MailPerAddressThrottle(_MailThrottle):
    """Confirmation mails asked from one client address, whatever account asks."""

    def ident(self, request: Request) -> str:
        return f"address-{throttle_ident(client_address(request))}"


MAIL_THROTTLES: tuple[type[_MailThrottle], ...] = (MailPerAccountThrottle, MailPerAddressThrottle)


def mail_wait(request: Request | HttpRequest) -> int | None:
    """Count one confirmation mail against each of ``MAIL_THROTTLES``; seconds to wait when
    over any (the pages call this; the API's views list the same throttles)."""
    from rest_framework.views import APIView  # not at the top: that import reads this module

    waits = []
    for throttle in (cls() for cls in MAIL_THROTTLES):
        # A page is no API view; the mail throttles read nothing of the view.
        if not throttle.allow_request(request, APIView()):  # type: ignore[arg-type]
            waits.append(throttle.wait())
    return retry_after_seconds(max(w or 0 for w in waits)) if waits else None
