"""Refuse requests the API must never try to handle: oversized bodies, NUL in the query."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from tournaments.api.bodies import error_body, json_error

NUL_MESSAGE = "Null characters are not allowed."


class RequestLimitsMiddleware:
    """Answer 413 to a body declared larger than DATA_UPLOAD_MAX_MEMORY_SIZE, 400 to NUL.

    Django enforces the size limit only when ``request.body`` is read; the API's parsers read
    the stream, so the declared length is checked here and the parsers cap what they read.
    PostgreSQL cannot store or compare a NUL character, so a query parameter holding one is
    refused before any filter hands it to the database.
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
            message = f"The request body is {length} bytes; the limit is {limit}."
            return json_error(request, "payload_too_large", message, 413)
        query = request.META.get("QUERY_STRING", "")
        if "%00" in query or "\x00" in query:
            bad = sorted({k for k, v in request.GET.lists() if "\x00" in k + "".join(v)})
            detail = {name.replace("\x00", "\\0"): [NUL_MESSAGE] for name in bad}
            message = f"{', '.join(detail)}: {NUL_MESSAGE}" if detail else NUL_MESSAGE
            return JsonResponse(error_body("invalid", message, detail), status=400)
        return self.get_response(request)
