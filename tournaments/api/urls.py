"""API routes, mounted under /api/."""

from csp.constants import SELF
from csp.decorators import csp_update
from django.urls import include, path, re_path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)
from rest_framework.routers import DefaultRouter

from tournaments.api.views_analytics import BotAnalyticsView
from tournaments.api.views_api import HealthView, not_found
from tournaments.api.views_auth import (
    EmailChangeView,
    EmailConfirmView,
    EmailResendView,
    MeView,
    SignUpView,
    TokenRevokeView,
    TokenView,
)
from tournaments.api.views_bots import BotViewSet
from tournaments.api.views_ladders import LadderViewSet
from tournaments.api.views_matches import MatchViewSet
from tournaments.api.views_ratings import (
    BotRatingHistoryView,
    BotRatingsView,
    LeaderboardIntervalsView,
    LeaderboardView,
    RecomputeDetailView,
    RecomputeView,
)
from tournaments.api.views_scrimmages import ScrimmageViewSet
from tournaments.api.views_staff import CollusionView
from tournaments.api.views_tournaments import TournamentViewSet
from tournaments.api.views_variants import VariantViewSet

# Redoc's sidebar shows a logo from its makers' site; the site's policy allows nothing but this
# server (config/settings.py), so the logo is left out (Redoc hides it when it does not load) and
# the docs work offline (api/redoc.html). Redoc searches in a worker it starts from a blob: URL.
REDOC_POLICY_UPDATE = {"worker-src": [SELF, "blob:"]}


class Router(DefaultRouter):
    """The default router, its root also listing the account, schema, docs and dashboard."""

    def get_api_root_view(self, api_urls=None):
        view = super().get_api_root_view(api_urls)
        # as_view() functions carry their initkwargs; the stubs type them as a plain callable.
        view.initkwargs["api_root_dict"].update(  # type: ignore[attr-defined]
            {
                "signup": "auth-signup",
                "token": "auth-token",
                "token-revoke": "auth-token-revoke",
                "me": "auth-me",
                "leaderboard": "leaderboard",
                "ratings-recompute": "ratings-recompute",
                "schema": "schema",
                "docs": "docs",
                "redoc": "redoc",
                "dashboard": "dashboard:home",
            }
        )
        return view


router = Router()
router.register("bots", BotViewSet, basename="bot")
router.register("variants", VariantViewSet, basename="variant")
router.register("tournaments", TournamentViewSet, basename="tournament")
router.register("matches", MatchViewSet, basename="match")
router.register("ladders", LadderViewSet, basename="ladder")
router.register("scrimmages", ScrimmageViewSet, basename="scrimmage")

urlpatterns = [
    path("auth/signup/", SignUpView.as_view(), name="auth-signup"),
    path("auth/token/", TokenView.as_view(), name="auth-token"),
    path("auth/token/revoke/", TokenRevokeView.as_view(), name="auth-token-revoke"),
    path("auth/me/", MeView.as_view(), name="auth-me"),
    path("auth/email/", EmailChangeView.as_view(), name="auth-email"),
    path("auth/email/resend/", EmailResendView.as_view(), name="auth-email-resend"),
    path("auth/email/confirm/", EmailConfirmView.as_view(), name="auth-email-confirm"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Split: Swagger UI's start-up script is its own response (docs/?script), not inline.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="docs"),
    path(
        "redoc/",
        csp_update(REDOC_POLICY_UPDATE)(
            SpectacularRedocView.as_view(url_name="schema", template_name="api/redoc.html")
        ),
        name="redoc",
    ),
    path("health/", HealthView.as_view(), name="health"),
    path("leaderboard/", LeaderboardView.as_view(), name="leaderboard"),
    path(
        "leaderboard/intervals/", LeaderboardIntervalsView.as_view(), name="leaderboard-intervals"
    ),
    path("bots/<int:pk>/analytics/", BotAnalyticsView.as_view(), name="bot-analytics"),
    path("bots/<int:pk>/ratings/", BotRatingsView.as_view(), name="bot-ratings"),
    path(
        "bots/<int:pk>/rating-history/", BotRatingHistoryView.as_view(), name="bot-rating-history"
    ),
    path("ratings/recompute/", RecomputeView.as_view(), name="ratings-recompute"),
    path(
        "ratings/recompute/<int:pk>/",
        RecomputeDetailView.as_view(),
        name="ratings-recompute-detail",
    ),
    path("staff/collusion/", CollusionView.as_view(), name="staff-collusion"),
    path("", include(router.urls)),
    # Anything else under /api/ is a JSON 404, whether DEBUG is on or not.
    re_path(r"^.*$", not_found),
]
