from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    """Bots, variants, tournaments, matches and ratings."""

    name = "tournaments"
    default_auto_field = "django.db.models.BigAutoField"
