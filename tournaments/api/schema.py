"""The OpenAPI schema says what the server does: who may call an operation without a token, and
every error status it can answer, with the one error body (tournaments/api/bodies.py)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.test import RequestFactory
from drf_spectacular.openapi import AutoSchema
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from tournaments.api.csv_export import DOWNLOAD_PARAM, CSVRenderer
from tournaments.api.pagination import PageNumberPagination
from tournaments.api.serializers.errors import ErrorOutput
from tournaments.api.throttling import COUNTS_AS_DOWNLOAD

CSV_BODY = {"schema": {"type": "string", "description": "CSV with a header row"}}
ERRORS = {
    "400": "the query or the body is invalid: the message names the field",
    "401": "the token (or session) sent is not valid, or this needs one and none was sent",
    "403": "signed in, but not allowed to do this",
    "404": "no such object here (or not yours to see), or no such page",
    "409": "the object's state does not allow this now: the message says why",
    "413": "the request body is too large",
    "414": "the request line is too long: the web server refuses it before the API sees it",
    "415": "the body is not JSON",
    "429": "too many requests: wait retry_after seconds (the Retry-After header)",
}


class ApiAutoSchema(AutoSchema):
    """drf-spectacular's schema, with the statuses and anonymous access the views really have."""

    def get_auth(self) -> list[dict[str, Any]]:
        auth = super().get_auth()
        if {} not in auth and self.anonymous_allowed():
            auth.append({})
        return auth

    def anonymous_allowed(self) -> bool:
        """Whether every permission of the view lets an anonymous request of this method in."""
        request = Request(RequestFactory().generic(self.method, self.path))
        request.user = AnonymousUser()
        return all(p.has_permission(request, self.view) for p in self.view.get_permissions())

    def get_filter_backends(self) -> list[Any]:
        # The list filters run on lists only (tournaments/api/filters.py ListFilterBackend).
        return [] if getattr(self.view, "detail", False) else super().get_filter_backends()

    def _get_format_parameters(self) -> list[dict[str, Any]]:
        # Where ?format= is a filter, no response format is chosen by it.
        negotiation = getattr(self.view.content_negotiation_class, "settings", None)
        if getattr(negotiation, "URL_FORMAT_OVERRIDE", None) is None:
            return []
        return super()._get_format_parameters()

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        error = {
            "application/json": {"schema": self.resolve_serializer(ErrorOutput, "response").ref}
        }
        query = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        if DOWNLOAD_PARAM in query:
            # ?download=csv answers CSV, errors included (as code,message rows).
            error = {**error, CSVRenderer.media_type: CSV_BODY}
            for response in operation["responses"].values():
                response.setdefault("content", {})[CSVRenderer.media_type] = CSV_BODY
        for code in self.error_statuses(operation):
            operation["responses"].setdefault(code, {"description": ERRORS[code]})
            if code != "414":  # gunicorn's own page (or the proxy's), not the error body
                operation["responses"][code].setdefault("content", error)
        return operation

    def error_statuses(self, operation: dict[str, Any]) -> list[str]:
        """The error statuses this operation can answer."""
        query = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        in_path = any(p["in"] == "path" for p in operation.get("parameters", []))
        body = "requestBody" in operation
        write = self.method not in SAFE_METHODS
        download = bool(
            {DOWNLOAD_PARAM, PageNumberPagination.page_size_query_param} & query
            or getattr(self.view, COUNTS_AS_DOWNLOAD, False)
        )
        codes = {
            "400": bool(query) or body,
            "401": True,
            "403": write or not self.anonymous_allowed(),
            "404": in_path or "page" in query,
            "409": write,
            "413": body,
            "414": bool(query),
            "415": body,
            "429": write or download,
        }
        return [code for code, applies in codes.items() if applies]
