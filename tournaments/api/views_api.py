"""Plain views of the API that belong to no resource."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.bodies import json_error


@csrf_exempt  # it changes nothing, and a POST must get the 404 too, not a CSRF page
def not_found(request: HttpRequest) -> JsonResponse:
    """Answer a JSON 404 for an unknown path under /api/, whatever the method."""
    return json_error(request, "not_found", f"No endpoint at {request.path}.", 404)


@cache
def platform_version() -> str:
    """The installed version of the platform's package."""
    try:
        return version("ohhell-arena")
    except PackageNotFoundError:
        return "unknown"


class HealthView(APIView):
    """Liveness for load balancers and monitors: the web process answers, with its version.

    It touches neither the database nor the cache, so it stays up while they recover.
    """

    authentication_classes: list = []
    permission_classes = [permissions.AllowAny]
    throttle_classes: list = []

    @extend_schema(
        responses=inline_serializer(
            "Health", {"status": serializers.CharField(), "version": serializers.CharField()}
        )
    )
    def get(self, request: Request) -> Response:
        """``{"status": "ok", "version": ...}`` while this web process serves requests."""
        return Response({"status": "ok", "version": platform_version()})
