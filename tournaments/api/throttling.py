"""Throttle writes, not reads."""

from __future__ import annotations

import ipaddress
import logging
import math
from enum import StrEnum

from redis.exceptions import RedisError
from rest_framework.exceptions import Throttled
from rest_framework.throttling import ScopedRateThrottle

from tournaments.client_address import client_address

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
