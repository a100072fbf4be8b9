"""Throttle writes, not reads."""

from __future__ import annotations

import logging

from redis.exceptions import RedisError
from rest_framework.throttling import ScopedRateThrottle

logger = logging.getLogger(__name__)

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class WriteRateThrottle(ScopedRateThrottle):
    """Count only writes, per user (or per address when anonymous), by the view's scope.

    A view's ``throttle_scope`` picks the rate; views without one use the ``writes`` rate.
    The counts live in the shared cache (Redis); while it cannot be reached, writes are let
    through unthrottled and logged, rather than failed.
    """

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
