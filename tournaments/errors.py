"""The errors services raise: each says what went wrong; the API decides the HTTP status.

``ApplicationError`` is a request the product refuses (invalid input); its subclasses name
other kinds of refusal. tournaments/api/errors.py maps each class to its status, once.
"""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A request the product refuses, with a message fit to show to the caller.

    ``field`` names the input at fault, when there is one, so the API can point at it.
    """

    default_code = "invalid"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        field: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.field = field
        self.extra = extra or {}

    @property
    def detail(self) -> dict[str, Any]:
        """The machine-readable part of the error body."""
        detail = dict(self.extra)
        if self.field:
            detail[self.field] = [self.message]
        return detail


class ConflictError(ApplicationError):
    """The request clashes with the current state (a name taken, a status that forbids it)."""

    default_code = "conflict"


class PermissionDeniedError(ApplicationError):
    """The caller may not do this to these rows."""

    default_code = "permission_denied"


class NotFoundError(ApplicationError):
    """A row the request names does not exist (or is not the caller's to see)."""

    default_code = "not_found"


class UnavailableError(ApplicationError):
    """The platform cannot do this now (a dependency is away); asking again later may work."""

    default_code = "unavailable"


class TooManyRequestsError(ApplicationError):
    """The caller has asked for this too often; it may again in ``retry_after`` seconds."""

    default_code = "throttled"

    def __init__(
        self,
        message: str,
        *,
        retry_after: int,
        field: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, field=field, extra=extra)
        self.retry_after = retry_after


class QuotaExceededError(TooManyRequestsError):
    """The caller has used up a quota; ``retry_after`` seconds from now it is given back."""

    default_code = "quota_exceeded"
