"""Helpers shared by the API tests."""

from __future__ import annotations

from typing import Any


def error_of(response: Any) -> dict[str, Any]:
    """Return the error of a response in the API's one error shape, checking that shape."""
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "detail"}
    return body["error"]
