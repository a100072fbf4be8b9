"""One error body for every error the API answers.

{"error": {"code": "...", "message": "...", "detail": {...}}}
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from rest_framework import exceptions, status


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def error_body(code: str, message: str, detail: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build the error body."""
    return {"error": {"code": code, "message": message, "detail": detail or {}}}


def json_error(request: HttpRequest, code: str, message: str, status_code: int) -> JsonResponse:
    """A bare JSON error response, for errors raised outside the API views."""
    return JsonResponse(error_body(code, message), status=status_code)
