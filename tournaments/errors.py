"""The one error services raise; the API turns it into a 4xx with the same body as any error."""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A request the product refuses, with a message fit to show to the caller.

    ``field`` names the input at fault, when there is one, so the API can point at it.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "invalid",
        status: int = 400,
        field: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.field = field
        self.extra = extra or {}

    @property
    def detail(self) -> dict[str, Any]:
        """The machine-readable part of the error body."""
        detail = dict(self.extra)
        if self.field:
            detail[self.field] = [self.message]
        return detail
