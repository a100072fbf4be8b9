"""Plain views of the API that belong to no resource."""

from django.http import HttpRequest, JsonResponse

from tournaments.api.bodies import json_error


def not_found(request: HttpRequest) -> JsonResponse:
    """Answer a JSON 404 for an unknown path under /api/."""
    return json_error(request, "not_found", f"No endpoint at {request.path}.", 404)
