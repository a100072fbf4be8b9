"""Middleware: give each request an id and its log line; refuse oversized request bodies
before anything reads them; set each page's Content-Security-Policy."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable

from csp.constants import UNSAFE_INLINE
from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase

from tournaments import log_context
from tournaments.api.bodies import json_error

request_log = logging.getLogger("tournaments.requests")


class RequestContextMiddleware:
    """Give each request an id, answered in ``X-Request-ID`` and carried by every log line
    written for it (and by the tasks it sends, config/celery_app.py); write one line when it
    is answered, with its method, path, status and time."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        request_id = uuid.uuid4().hex
        began = time.monotonic()
        with log_context.bound(request_id=request_id):
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            ms = round((time.monotonic() - began) * 1000)
            request_log.info(
                "%s %s %s in %d ms",
                request.method,
                request.path,
                response.status_code,
                ms,
                extra={
                    "method": request.method,
                    "path": request.path,
                    "status": response.status_code,
                    "duration_ms": ms,
                },
            )
        return response


class RequestSizeLimitMiddleware:
    """Answer 413 to a body declared larger than DATA_UPLOAD_MAX_MEMORY_SIZE.

    Django enforces the limit only when ``request.body`` is read; the API's parsers read the
    stream, so the declared length is checked here and the parsers cap what they read.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return json_error(request, "bad_request", "Content-Length is not a number.", 400)
        if limit is not None and length > limit:
            message = f"The request body is larger than {limit} bytes."
            return json_error(request, "payload_too_large", message, 413)
        return self.get_response(request)


API_PREFIX = "/api/"
# The pages under /api/ are drawn by code this project does not write: DRF's browsable API puts
# styles in style attributes and a <style> block, Swagger UI and Redoc in <style> blocks they
# add as they run. Their styles may be inline; their scripts, like every page's, come only
# from files on this server.
API_POLICY_UPDATE = {"style-src": [UNSAFE_INLINE]}


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware, with the site's policy (config/settings.py) loosened for the
    styles of the pages under /api/; a view's own update (csp_update) adds to that."""

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if request.path_info.startswith(API_PREFIX):
            parts.update = {**API_POLICY_UPDATE, **(parts.update or {})}
        return parts
