"""Throttle writes, not reads."""

from __future__ import annotations

from rest_framework.throttling import ScopedRateThrottle

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class WriteRateThrottle(ScopedRateThrottle):
    """Count only writes, per user (or per address when anonymous), by the view's scope.

    A view's ``throttle_scope`` picks the rate; views without one use the ``writes`` rate.
    """

    def allow_request(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        if not getattr(view, "throttle_scope", None):
            view.throttle_scope = "writes"
        return super().allow_request(request, view)
