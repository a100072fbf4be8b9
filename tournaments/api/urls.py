"""API routes, mounted under /api/."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from tournaments.api.views_api import not_found
from tournaments.api.views_auth import MeView, SignUpView, TokenView
from tournaments.api.views_bots import BotViewSet
from tournaments.api.views_variants import VariantViewSet


class Router(DefaultRouter):
    """The default router, its root also listing the account, schema and docs endpoints."""

    def get_api_root_view(self, api_urls=None):
        view = super().get_api_root_view(api_urls)
        view.initkwargs["api_root_dict"].update(
            {
                "signup": "auth-signup",
                "token": "auth-token",
                "me": "auth-me",
                "schema": "schema",
                "docs": "docs",
                "redoc": "redoc",
            }
        )
        return view


router = Router()
router.register("bots", BotViewSet, basename="bot")
router.register("variants", VariantViewSet, basename="variant")

urlpatterns = [
    path("auth/signup/", SignUpView.as_view(), name="auth-signup"),
    path("auth/token/", TokenView.as_view(), name="auth-token"),
    path("auth/me/", MeView.as_view(), name="auth-me"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path("", include(router.urls)),
    # Anything else under /api/ is a JSON 404, whether DEBUG is on or not.
    re_path(r"^.*$", not_found),
]
