"""Top-level routes: the API under /api/, the admin under /admin/, the dashboard at the root."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views import defaults

from tournaments.api.bodies import json_error

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("tournaments.api.urls")),
    path("", include("tournaments.dashboard.urls")),
]


def handler404(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Answer JSON under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return json_error(request, "not_found", "Not found.", 404)
    return defaults.page_not_found(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    """Answer JSON under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return json_error(request, "server_error", "Internal server error.", 500)
    return defaults.server_error(request)


def handler400(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Answer JSON under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return json_error(request, "bad_request", "Bad request.", 400)
    return defaults.bad_request(request, exception)


def handler403(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Answer JSON under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return json_error(request, "permission_denied", "Permission denied.", 403)
    return defaults.permission_denied(request, exception)
