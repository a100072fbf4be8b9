"""One error body for every error the API answers.

{"error": {"code": "...", "message": "...", "detail": {...}}}

A 429 also carries ``"retry_after"``: the whole seconds to wait, as its ``Retry-After`` header.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from rest_framework import exceptions, status


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def error_body(
    code: str,
    message: str,
    detail: dict[str, Any] | None = None,
    *,
    retry_after: int | None = None,
) -> dict[str, Any]:
    """Build the error body."""
    error: dict[str, Any] = {"code": code, "message": message, "detail": detail or {}}
    if retry_after is not None:
        error["retry_after"] = retry_after
    return {"error": error}


def json_error(request: HttpRequest, code: str, message: str, status_code: int) -> JsonResponse:
    """A bare JSON error response, for errors raised outside the API views."""
    return JsonResponse(error_body(code, message), status=status_code)
