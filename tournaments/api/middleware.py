"""Refuse oversized request bodies before anything reads them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from tournaments.api.bodies import json_error


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
