"""Registering, changing, verifying and disabling bots."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from arena.faults import ArenaError, BotFault, FaultKind, safe_text
from arena.runtime import hello_once
from arena.transport import BotClient
from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.errors import ApplicationError, ConflictError, UnavailableError
from tournaments.models import (
    Bot,
    BotHealthCheck,
    BotStatus,
    BotVersion,
    DisabledCause,
    HealthCheckStatus,
)
from tournaments.models.bots import BOT_NAME_VALIDATOR
from tournaments.netpolicy import (
    EndpointRefused,
    bot_limits,
    bot_network_policy,
    check_endpoint_url,
    endpoint_addresses,
)


@dataclass(frozen=True)
class HelloResult:
    """The outcome of one ``hello`` call."""

    ok: bool
    latency_ms: int | None = None
    error_kind: str = ""
    error_message: str = ""


EDITABLE_FIELDS = ("name", "endpoint_url", "description", "accept_invitations")


def new_secret() -> str:
    """Draw a signing secret: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def _clean_name(name: str) -> str:
    try:
        BOT_NAME_VALIDATOR(name)
    except ValidationError as exc:
        raise ApplicationError(exc.messages[0], field="name") from None
    return name


def _clean_endpoint(url: str) -> str:
    try:
        return check_endpoint_url(url)
    except EndpointRefused as exc:
        raise ApplicationError(f"Endpoint refused: {exc}.", field="endpoint_url") from None


def _save(bot: Bot, **kwargs) -> None:
    """Save, turning the database's name constraint into a clear refusal."""
    try:
        with transaction.atomic():
            bot.save(**kwargs)
    except IntegrityError:
        raise ConflictError(f"A bot named {bot.name!r} already exists.", field="name") from None


def bot_register(
    *,
    owner: User,
    name: str,
    endpoint_url: str,
    description: str = "",
    accept_invitations: bool = False,
) -> tuple[Bot, str]:
    """Register a bot, pending verification; return it with its secret, shown only now."""
    secret = new_secret()
    bot = Bot(
        owner=owner,
        name=_clean_name(name),
        endpoint_url=_clean_endpoint(endpoint_url),
        description=description,
        accept_invitations=accept_invitations,
        secret=secret,
    )
    _save(bot)
    bot_verify_soon(bot=bot)
    return bot, secret


def bot_update(*, bot: Bot, data: dict) -> Bot:
    """Change a bot's name, endpoint, description or consent to invitations; a new endpoint
    needs verifying again."""
    changed = [
        field for field in EDITABLE_FIELDS if field in data and data[field] != getattr(bot, field)
    ]
    if "name" in changed:
        bot.name = _clean_name(data["name"])
    if "endpoint_url" in changed:
        bot.endpoint_url = _clean_endpoint(data["endpoint_url"])
        if bot.status == BotStatus.ACTIVE:
            bot.status = BotStatus.PENDING
            changed.append("status")
    if "description" in changed:
        bot.description = data["description"]
    if "accept_invitations" in changed:
        bot.accept_invitations = data["accept_invitations"]
    if changed:
        _save(bot, update_fields=[*changed, "updated_at"])
        if "endpoint_url" in changed:
            bot_verify_soon(bot=bot)
    return bot


def bot_new_version(*, bot: Bot, endpoint_url: str | None = None) -> Bot:
    """Mark a new version of the bot, optionally at a new endpoint (verified again then).

    The bot keeps its name, its past matches and its ratings' mu; the rating writer raises
    each rating's sigma to RATING_VERSION_SIGMA at this point of the rating sequence and marks
    it in the history, so the new version is placed again quickly and a recompute agrees.
    """
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot.pk)
        if endpoint_url is not None:
            bot = bot_update(bot=bot, data={"endpoint_url": endpoint_url})
        bot.version += 1
        bot.save(update_fields=["version", "updated_at"])
        BotVersion.objects.create(
            bot=bot, version=bot.version, sigma_floor=settings.RATING_VERSION_SIGMA
        )
        dispatch.send(Task.RATE_FINISHED_MATCHES)
    return bot


def bot_verify_soon(*, bot: Bot) -> None:
    """Check a new or moved endpoint with ``hello`` once the change is committed."""
    dispatch.send(Task.VERIFY_BOT, bot.pk)


def bot_delete(*, bot: Bot) -> None:
    """Delete a bot that has never played; one with recorded matches is kept for the record."""
    if bot.seats.exists():
        raise ConflictError(
            "This bot has recorded matches, so it cannot be deleted; it can be disabled instead.",
        )
    bot.delete()


def bot_rotate_secret(*, bot: Bot) -> str:
    """Replace the signing secret; return the new one, shown only now."""
    secret = new_secret()
    bot.secret = secret
    bot.save(update_fields=["secret", "updated_at"])
    return secret


def bot_disable(*, bot: Bot, reason: str, cause: str = DisabledCause.ADMIN) -> Bot:
    """Take a bot out of play, with a reason its owner can read."""
    bot.status = BotStatus.DISABLED
    bot.disabled_cause = cause
    bot.disabled_reason = safe_text(reason, 500)
    bot.save(update_fields=["status", "disabled_cause", "disabled_reason", "updated_at"])
    return bot


def bot_enable(*, bot: Bot) -> Bot:
    """Put a disabled bot back; it must pass verification before it plays again."""
    bot.status = BotStatus.PENDING
    bot.disabled_cause = DisabledCause.NONE
    bot.disabled_reason = ""
    bot.save(update_fields=["status", "disabled_cause", "disabled_reason", "updated_at"])
    return bot


def _call_hello(bot: Bot) -> HelloResult:
    """Call the bot's ``hello`` through the arena's transport, with the deployment's limits."""
    try:
        result = hello_once(
            bot.endpoint_url, bot.secret, limits=bot_limits(), policy=bot_network_policy()
        )
    except BotFault as fault:
        latency = None if fault.latency_ms is None else round(fault.latency_ms)
        return HelloResult(False, latency, str(fault.kind), fault.detail)
    except ArenaError as exc:
        # The platform's own failure: not the bot's fault, so nothing is recorded against it.
        raise UnavailableError(f"The bot could not be verified now: {exc}") from None
    return HelloResult(True, round(result.latency_ms))


def bot_record_check(
    *, bot: Bot, result: HelloResult, check: BotHealthCheck | None = None
) -> BotHealthCheck:
    """Store a health check's outcome (completing ``check`` when it was queued) and move the
    bot's status accordingly.

    A passed check also stores the addresses the endpoint resolves to (the bot's team by
    address, see tournaments/selectors/teams.py); a bot whose host then does not resolve fails
    the check, so no bot plays with its address unknown.
    """
    addresses: list[str] = []
    if result.ok:
        try:
            addresses = endpoint_addresses(bot.endpoint_url)
        except EndpointRefused as exc:
            result = HelloResult(False, result.latency_ms, FaultKind.CONNECTION_ERROR, str(exc))
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot.pk)
        if check is None:
            check = BotHealthCheck(bot=bot)
        check.ok = result.ok
        check.latency_ms = result.latency_ms
        check.error_kind = result.error_kind
        check.error_message = safe_text(result.error_message, 500)
        check.save()
        if result.ok:
            bot.consecutive_failures = 0
            bot.last_verified_at = timezone.now()
            bot.endpoint_addresses = addresses
            # A bot disabled by staff stays disabled; one disabled for failing comes back.
            if bot.disabled_cause != DisabledCause.ADMIN:
                bot.status = BotStatus.ACTIVE
                bot.disabled_cause = DisabledCause.NONE
                bot.disabled_reason = ""
        else:
            bot.consecutive_failures += 1
            if (
                bot.status == BotStatus.ACTIVE
                and bot.consecutive_failures >= settings.HEALTH_FAILURES_TO_DISABLE
            ):
                bot.status = BotStatus.DISABLED
                bot.disabled_cause = DisabledCause.HEALTH
                bot.disabled_reason = safe_text(
                    f"failed {bot.consecutive_failures} health checks in a row; last: "
                    f"{result.error_kind}: {result.error_message}",
                    500,
                )
        bot.updated_at = timezone.now()
        bot.save()
    return check


def bot_verify(*, bot: Bot) -> BotHealthCheck:
    """Call the bot's ``hello`` now and record the outcome (workers and the demo only)."""
    return bot_record_check(bot=bot, result=_call_hello(bot))


def bot_verify_request(*, bot: Bot) -> BotHealthCheck:
    """Queue a ``hello`` check of the bot and answer it at once, pending, for the caller to poll.

    A bot has at most one pending check: asking again answers the pending one, so repeated
    requests cost one call of the bot. A check left pending longer than
    ``BOT_VERIFY_RESEND_S`` (its task lost with a broker or worker) is sent again.
    """
    with transaction.atomic():
        Bot.objects.select_for_update().only("pk").get(pk=bot.pk)
        check = bot.health_checks.filter(ok__isnull=True).order_by("-at").first()
        if check is not None:
            resend_before = timezone.now() - timedelta(seconds=settings.BOT_VERIFY_RESEND_S)
            if check.at > resend_before:
                return check
            check.at = timezone.now()
            check.save(update_fields=["at"])
        else:
            check = BotHealthCheck.objects.create(bot=bot)
        dispatch.send(Task.COMPLETE_HEALTH_CHECK, check.pk)
    return check


def bot_complete_check(*, check_id: int) -> HealthCheckStatus | None:
    """Call the bot of a pending check and record the outcome; None when there is nothing to do.

    Run by a worker; a second delivery of the same check finds it finished and does nothing.
    """
    check = BotHealthCheck.objects.select_related("bot").filter(pk=check_id).first()
    if check is None or check.ok is not None:
        return None
    result = _call_hello(check.bot)
    with transaction.atomic():
        # Lock and re-read: another delivery may have finished the check meanwhile.
        locked = BotHealthCheck.objects.select_for_update().filter(pk=check_id).first()
        if locked is None or locked.ok is not None:
            return None
        return bot_record_check(bot=check.bot, result=result, check=locked).status


async def _hello_all(targets: list[tuple[int, str, str]]) -> dict[int, HelloResult]:
    """Call every bot's hello at once over one pool; a platform error leaves a bot out."""
    results: dict[int, HelloResult] = {}
    async with BotClient(limits=bot_limits(), policy=bot_network_policy()) as client:

        async def one(bot_id: int, url: str, secret: str) -> None:
            try:
                answer = await client.hello(url, secret)
                results[bot_id] = HelloResult(True, round(answer.latency_ms))
            except BotFault as fault:
                latency = None if fault.latency_ms is None else round(fault.latency_ms)
                results[bot_id] = HelloResult(False, latency, str(fault.kind), fault.detail)
            except ArenaError:
                pass

        await asyncio.gather(*(one(*target) for target in targets))
    return results


def bots_check_health() -> dict[str, int]:
    """The periodic health check: hello every active bot and every bot disabled for failing.

    Repeated failures disable a bot with the reason shown to its owner; a bot disabled for
    failing comes back as soon as it passes again. Bots disabled by staff are left alone.
    """
    bots = list(
        Bot.objects.filter(
            Q(status=BotStatus.ACTIVE)
            | Q(status=BotStatus.DISABLED, disabled_cause=DisabledCause.HEALTH)
        ).only("pk", "endpoint_url", "secret")
    )
    results = asyncio.run(_hello_all([(b.pk, b.endpoint_url, b.secret) for b in bots]))
    counts = {"checked": 0, "ok": 0, "failed": 0}
    for bot in bots:
        result = results.get(bot.pk)
        if result is None:
            continue
        bot_record_check(bot=bot, result=result)
        counts["checked"] += 1
        counts["ok" if result.ok else "failed"] += 1
    return counts
