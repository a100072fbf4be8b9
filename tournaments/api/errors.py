"""The API's exception handler: every error in the one error body."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from tournaments.api.bodies import PayloadTooLarge, error_body
from tournaments.api.throttling import TooMany, retry_after_seconds, too_many_message
from tournaments.errors import (
    ApplicationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    TooManyRequestsError,
    UnavailableError,
)

# The HTTP status of each kind of refusal; any other ApplicationError is a 400.
STATUS_OF: dict[type[ApplicationError], int] = {
    ConflictError: 409,
    PermissionDeniedError: 403,
    NotFoundError: 404,
    UnavailableError: 503,
    TooManyRequestsError: 429,
}


def status_of(exc: ApplicationError) -> int:
    """The HTTP status the API answers a service's refusal with."""
    for cls in type(exc).__mro__:
        if cls in STATUS_OF:
            return STATUS_OF[cls]
    return 400


def _first_message(detail: Any, path: str = "") -> str:
    """Flatten the first validation message, prefixed with the field it concerns."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = str(key) if key != "non_field_errors" else ""
            return _first_message(value, f"{path}.{name}" if path and name else path or name)
    if isinstance(detail, list) and detail:
        return _first_message(detail[0], path)
    return f"{path}: {detail}" if path else str(detail)


def _from_validation(exc: exceptions.ValidationError) -> Response:
    detail: dict[str, Any] = (
        {str(key): value for key, value in exc.detail.items()}
        if isinstance(exc.detail, dict)
        else {"non_field_errors": exc.detail}
    )
    message = _first_message(detail)
    return Response(error_body("invalid", message, detail), status=exc.status_code)


def _from_throttled(exc: exceptions.Throttled) -> Response:
    seconds = retry_after_seconds(getattr(exc, "wait", None))
    locked = exc.get_codes() == TooMany.LOCKED_OUT
    reason = TooMany.LOCKED_OUT if locked else TooMany.THROTTLED
    body = error_body(reason.value, too_many_message(reason, seconds), retry_after=seconds)
    return Response(body, status=exc.status_code, headers={"Retry-After": str(seconds)})


def _translate(exc: Exception) -> Exception:
    if isinstance(exc, Http404):
        return exceptions.NotFound()
    if isinstance(exc, PermissionDenied):
        return exceptions.PermissionDenied()
    if isinstance(exc, RequestDataTooBig):
        return PayloadTooLarge()
    if isinstance(exc, DjangoValidationError):
        return exceptions.ValidationError(exc.messages)
    return exc


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """Render every error the views raise in the one error body."""
    if isinstance(exc, ApplicationError):
        message = f"{exc.field}: {exc.message}" if exc.field else exc.message
        if isinstance(exc, TooManyRequestsError):
            body = error_body(exc.code, message, exc.detail, retry_after=exc.retry_after)
            return Response(body, status=429, headers={"Retry-After": str(exc.retry_after)})
        body = error_body(exc.code, message, exc.detail)
        return Response(body, status=status_of(exc))
    exc = _translate(exc)
    if isinstance(exc, exceptions.ValidationError):
        return _from_validation(exc)
    if isinstance(exc, exceptions.Throttled):
        return _from_throttled(exc)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
    message = str(exc.detail) if isinstance(exc, exceptions.APIException) else str(exc)
    response.data = error_body(code if isinstance(code, str) else "error", message)
    return response
