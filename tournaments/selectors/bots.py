"""Reading bots."""

from __future__ import annotations

from django.db.models import QuerySet

from tournaments.models import Bot, BotHealthCheck


def bot_list() -> QuerySet[Bot]:
    """All bots with their owners, ready to page through without a query per row."""
    return Bot.objects.select_related("owner").defer("secret")


def bot_health_checks(*, bot: Bot, limit: int = 20) -> QuerySet[BotHealthCheck]:
    """The bot's latest health checks, newest first."""
    return bot.health_checks.order_by("-at")[:limit]
