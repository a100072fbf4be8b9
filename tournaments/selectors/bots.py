"""Reading bots."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Q, QuerySet

from tournaments.models import Bot, BotHealthCheck, SeatFault

LIST_FIELDS = (
    "id",
    "name",
    "description",
    "endpoint_url",
    "status",
    "disabled_reason",
    "disabled_cause",
    "last_verified_at",
    "last_check",
    "security_warnings",
    "consecutive_failures",
    "accept_invitations",
    "accepts_scrimmages",
    "reference_player",
    "ladder_opt_in",
    "version",
    "created_at",
    "updated_at",
    "owner_id",
    "owner__username",
    # Whether the owner's address is confirmed: why an opted-in bot waits off the ladders.
    "owner__email",
    "owner__confirmed_email__email",
    # The latest check, passed or failed, shown beside "Last verified".
    "last_check__at",
    "last_check__ok",
    "last_check__latency_ms",
    "last_check__error_kind",
    "last_check__error_message",
    "last_check__warnings",
)


def bot_list() -> QuerySet[Bot]:
    """All bots with their owners' names, in one query per page and without the secret."""
    return Bot.objects.select_related("owner__confirmed_email", "last_check").only(*LIST_FIELDS)


def bot_health_checks(*, bot: Bot, limit: int = 20) -> QuerySet[BotHealthCheck]:
    """The bot's latest health checks, newest first."""
    return bot.health_checks.order_by("-at")[:limit]


def bot_health_check(*, bot: Bot, check_id: int) -> BotHealthCheck | None:
    """One of the bot's health checks, or None."""
    return bot.health_checks.filter(pk=check_id).first()


def bots_of_owner(*, owner: User | AnonymousUser) -> QuerySet[Bot]:
    """The user's bots, by name, each with its latest check, without their secrets."""
    return (
        Bot.objects.filter(owner_id=owner.pk)
        .select_related("last_check")
        .defer("secret")
        .order_by("name")
    )


def bot_recent_faults(*, bot: Bot, limit: int = 20) -> list[SeatFault]:
    """The bot's latest fault records, each with the match it happened in, newest match first;
    none from other owners' scrimmages, which are theirs to see
    (tournaments/selectors/scrimmages.py counts those)."""
    others = Q(seat__match__scrimmage__isnull=False) & ~Q(
        seat__match__scrimmage__owner_id=bot.owner_id
    )
    rows = (
        SeatFault.objects.filter(seat__bot=bot)
        .exclude(others)
        .select_related("seat__match__variant", "seat__match__tournament")
    )
    return list(rows.order_by("-seat__match__created_at", "-seat__match_id", "kind")[:limit])
