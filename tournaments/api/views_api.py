"""Plain views of the API that belong to no resource."""

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from tournaments.api.bodies import json_error


@csrf_exempt  # it changes nothing, and a POST must get the 404 too, not a CSRF page
def not_found(request: HttpRequest) -> JsonResponse:
    """Answer a JSON 404 for an unknown path under /api/, whatever the method."""
    return json_error(request, "not_found", f"No endpoint at {request.path}.", 404)
