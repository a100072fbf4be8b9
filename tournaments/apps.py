from django.apps import AppConfig
from django.db.models.signals import post_migrate


def prepare_broker(**signal: object) -> None:
    """After migrate, the local broker of embedded defaults too (config/celery_app.py)."""
    from config.celery_app import prepare_embedded_broker

    prepare_embedded_broker()


class TournamentsConfig(AppConfig):
    """Bots, variants, tournaments, matches and ratings."""

    name = "tournaments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(prepare_broker, sender=self)
