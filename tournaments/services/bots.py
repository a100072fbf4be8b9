"""Registering, changing, verifying and disabling bots."""

from __future__ import annotations

import asyncio
import queue
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from arena.faults import ArenaError, BotFault, safe_text
from arena.runtime import verify_once
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
    MatchSeat,
    MatchStatus,
)
from tournaments.models.bots import BOT_NAME_VALIDATOR
from tournaments.models.faults import FaultKind
from tournaments.netpolicy import (
    EndpointRefused,
    bot_limits,
    bot_network_policy,
    check_endpoint_url,
    endpoint_addresses,
)
from tournaments.services.checks import check_queue, checks_send_next
from tournaments.services.shares import shares_seat_soon


@dataclass(frozen=True)
class HelloResult:
    """The outcome of one ``hello`` call, and of the signing probes when they were sent.

    ``warnings`` are the probes the bot accepted (``arena.probes.ProbeKind`` values); ``probed``
    tells a verification that sent them from a health check that did not.
    """

    ok: bool
    latency_ms: int | None = None
    error_kind: str = ""
    error_message: str = ""
    warnings: tuple[str, ...] = ()
    probed: bool = False


# What the owner reads when the bot refused the platform's signature.
REFUSAL_REASON = "your bot refused the platform's signature: check its secret"


EDITABLE_FIELDS = (
    "name",
    "endpoint_url",
    "description",
    "accept_invitations",
    "accepts_scrimmages",
)


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
    accepts_scrimmages: bool = False,
) -> tuple[Bot, str]:
    """Register a bot, pending verification; return it with its secret, shown only now.

    An account may have ``BOTS_PER_ACCOUNT_MAX`` bots (staff any number): one owner's many
    bots would sit together at tables and load the workers.
    """
    secret = new_secret()
    bot = Bot(
        owner=owner,
        name=_clean_name(name),
        endpoint_url=_clean_endpoint(endpoint_url),
        description=description,
        accept_invitations=accept_invitations,
        accepts_scrimmages=accepts_scrimmages,
        secret=secret,
    )
    with transaction.atomic():
        _check_bot_count(owner)
        _save(bot)
        check_queue(bot=bot, counted=True)
    return bot, secret


def _check_bot_count(owner: User) -> None:
    """Refuse one more bot past the cap; the owner's row is locked so two registrations
    at once cannot both pass."""
    if owner.is_staff:
        return
    User.objects.select_for_update().filter(pk=owner.pk).first()
    limit = settings.BOTS_PER_ACCOUNT_MAX
    if Bot.objects.filter(owner=owner).count() >= limit:
        raise ConflictError(
            f"An account may register at most {limit} bots.",
            field="owner",
            extra={"limit": limit},
        )


def bot_update(*, bot: Bot, data: dict) -> Bot:
    """Change a bot's name, endpoint, description, consent to invitations or to other owners'
    scrimmages; a new endpoint needs verifying again."""
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
    if "accepts_scrimmages" in changed:
        bot.accepts_scrimmages = data["accepts_scrimmages"]
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


def bot_verify_soon(*, bot: Bot) -> BotHealthCheck:
    """Queue a verification of a moved endpoint in its owner's backlog (tournaments/services/
    checks.py); not counted against the owner's hourly allowance, as a bot has one pending
    check at most."""
    return check_queue(bot=bot, counted=False)


def bot_delete(*, bot: Bot) -> None:
    """Delete a bot that has never played; one with recorded matches is kept for the record."""
    if bot.seats.exists():
        raise ConflictError(
            "This bot has recorded matches, so it cannot be deleted; it can be disabled instead.",
        )
    bot.delete()


def bot_rotate_secret(*, bot: Bot) -> str:
    """Replace the signing secret; return the new one, shown only now.

    The bot still checks with the old one until its owner restarts it, so an active bot leaves
    the ladders, pending, until it verifies with the new secret.
    """
    with transaction.atomic():
        status = Bot.objects.select_for_update().values_list("status", flat=True).get(pk=bot.pk)
        bot.secret = new_secret()
        bot.status = BotStatus.PENDING if status == BotStatus.ACTIVE else status
        bot.save(update_fields=["secret", "status", "updated_at"])
    return bot.secret


def bot_disable(*, bot: Bot, reason: str, cause: str = DisabledCause.ADMIN) -> Bot:
    """Take a bot out of play, with a reason its owner can read."""
    _disable(bot, DisabledCause(cause), reason)
    bot.save(update_fields=["status", "disabled_cause", "disabled_reason", "updated_at"])
    return bot


def bot_enable(*, bot: Bot) -> Bot:
    """Put a disabled bot back; it must pass verification before it plays again."""
    bot.status = BotStatus.PENDING
    bot.disabled_cause = DisabledCause.NONE
    bot.disabled_reason = ""
    bot.save(update_fields=["status", "disabled_cause", "disabled_reason", "updated_at"])
    return bot


def _fault_result(fault: BotFault) -> HelloResult:
    latency = None if fault.latency_ms is None else round(fault.latency_ms)
    return HelloResult(False, latency, str(fault.kind), fault.detail)


def _call_verify(bot: Bot) -> HelloResult:
    """Verify the bot through the arena: ``hello``, then the signing probes, with the
    deployment's limits."""
    try:
        verification = verify_once(
            bot.endpoint_url, bot.secret, limits=bot_limits(), policy=bot_network_policy()
        )
    except BotFault as fault:
        return _fault_result(fault)
    except ArenaError as exc:
        # The platform's own failure: not the bot's fault, so nothing is recorded against it.
        raise UnavailableError(f"The bot could not be verified now: {exc}") from None
    accepted = tuple(str(kind) for kind in verification.accepted)
    return HelloResult(True, round(verification.hello.latency_ms), warnings=accepted, probed=True)


def _disable(bot: Bot, cause: DisabledCause, reason: str) -> None:
    bot.status = BotStatus.DISABLED
    bot.disabled_cause = cause
    bot.disabled_reason = safe_text(reason, 500)


def _after_failure(bot: Bot, result: HelloResult, *, verifying: bool) -> None:
    """Move a bot that failed a check: a refusal or a failed verification takes it off the
    ladders at once; other health-check failures only after several in a row."""
    bot.consecutive_failures += 1
    if bot.disabled_cause == DisabledCause.ADMIN:
        return
    if result.error_kind == FaultKind.REFUSED:
        _disable(bot, DisabledCause.REFUSED, f"{REFUSAL_REASON} ({result.error_message})")
    elif (
        bot.status == BotStatus.ACTIVE
        and bot.consecutive_failures >= settings.HEALTH_FAILURES_TO_DISABLE
    ):
        _disable(
            bot,
            DisabledCause.HEALTH,
            f"failed {bot.consecutive_failures} health checks in a row; last: "
            f"{result.error_kind}: {result.error_message}",
        )
    elif bot.status == BotStatus.ACTIVE and verifying:
        bot.status = BotStatus.PENDING


def bot_record_check(
    *,
    bot: Bot,
    result: HelloResult,
    check: BotHealthCheck | None = None,
    verifying: bool = False,
) -> BotHealthCheck:
    """Store a check's outcome (completing ``check`` when it was queued) and move the bot's
    status accordingly; ``verifying`` for a verification rather than a periodic check.

    A passed check also stores the addresses the endpoint resolves to (the bot's team by
    address, see tournaments/selectors/teams.py); a bot whose host then does not resolve fails
    the check, so no bot plays with its address unknown.
    """
    addresses: list[str] = []
    if result.ok:
        try:
            addresses = endpoint_addresses(bot.endpoint_url)
        except EndpointRefused as exc:
            result = replace(
                result, ok=False, error_kind=FaultKind.CONNECTION_ERROR, error_message=str(exc)
            )
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot.pk)
        if check is None:
            check = BotHealthCheck(bot=bot)
        check.ok = result.ok
        check.latency_ms = result.latency_ms
        check.error_kind = result.error_kind
        check.error_message = safe_text(result.error_message, 500)
        check.warnings = list(result.warnings)
        check.save()
        bot.last_check = check
        if result.ok:
            bot.consecutive_failures = 0
            bot.last_verified_at = timezone.now()
            if result.probed:
                bot.security_warnings = list(result.warnings)
            bot.endpoint_addresses = addresses
            # A bot disabled by staff stays disabled; one disabled for failing comes back, and
            # one disabled for refusing only through a verification (asked for by its owner).
            if bot.disabled_cause != DisabledCause.ADMIN and (
                verifying or bot.disabled_cause != DisabledCause.REFUSED
            ):
                if bot.status != BotStatus.ACTIVE and bot.ladder_opt_in:
                    shares_seat_soon([bot.pk])
                bot.status = BotStatus.ACTIVE
                bot.disabled_cause = DisabledCause.NONE
                bot.disabled_reason = ""
        else:
            _after_failure(bot, result, verifying=verifying)
        bot.updated_at = timezone.now()
        bot.save()
    return check


def bot_verify(*, bot: Bot) -> BotHealthCheck:
    """Verify the bot now and record the outcome (workers and the demo only)."""
    return bot_record_check(bot=bot, result=_call_verify(bot), verifying=True)


def bots_refused_signature(*, bot_ids: list[int], match_id: int) -> int:
    """Take bots that refused every request of a match off the ladders until they verify
    again, with the reason; a bot disabled by staff keeps its cause. Return how many moved."""
    reason = safe_text(
        f"{REFUSAL_REASON} (it answered 401 or 403 to every request of match {match_id})", 500
    )
    return (
        Bot.objects.filter(pk__in=bot_ids)
        .exclude(status=BotStatus.DISABLED, disabled_cause=DisabledCause.ADMIN)
        .update(
            status=BotStatus.DISABLED,
            disabled_cause=DisabledCause.REFUSED,
            disabled_reason=reason,
            updated_at=timezone.now(),
        )
    )


def bots_refusals_counted(*, bot_ids: list[int], match_id: int) -> set[int]:
    """The bots among ``bot_ids``, refusing every request of this match, whose refusal counts
    against them: they refused another match that ended within REFUSAL_GRACE_DAYS. The first
    refusal in that time is forgiven (left out of the rating, as a secret gone wrong); a bot
    that refuses again ranks last, so refusing cannot skip the rating of matches whose first
    hand looks bad. The bots' rows are locked, so two matches recorded at once see each other.
    """
    if not bot_ids or settings.REFUSAL_GRACE_DAYS == 0:
        return set(bot_ids)
    list(Bot.objects.select_for_update().filter(pk__in=bot_ids).order_by("pk").values("pk"))
    since = timezone.now() - timedelta(days=settings.REFUSAL_GRACE_DAYS)
    earlier = (
        MatchSeat.objects.filter(
            bot_id__in=bot_ids,
            refused_every_request=True,
            match__status=MatchStatus.FINISHED,
            match__finished_at__gt=since,
        )
        .exclude(match_id=match_id)
        .values_list("bot_id", flat=True)
    )
    return set(earlier)


def bot_verify_request(*, bot: Bot, counted: bool = True) -> BotHealthCheck:
    """Queue a verification of the bot and answer it at once, pending, for the caller to poll.

    A bot has at most one pending check: asking again answers the pending one, so repeated
    requests cost one call of the bot; one whose message was lost is sent again. The check
    waits in its owner's backlog (tournaments/services/checks.py). ``counted``: asked by the
    owner, within CHECK_REQUESTS_PER_HOUR; staff's requests from the admin are not counted.
    """
    return check_queue(bot=bot, counted=counted)


def bot_complete_check(*, check_id: int) -> HealthCheckStatus | None:
    """Call the bot of a pending check and record the outcome; None when there is nothing to do.

    Run by a worker; a second delivery of the same check finds it finished and does nothing.
    """
    check = BotHealthCheck.objects.select_related("bot").filter(pk=check_id).first()
    if check is None or check.ok is not None:
        return None
    result = _call_verify(check.bot)
    with transaction.atomic():
        # Lock and re-read: another delivery may have finished the check meanwhile.
        locked = BotHealthCheck.objects.select_for_update().filter(pk=check_id).first()
        if locked is None or locked.ok is not None:
            return None
        status = bot_record_check(bot=check.bot, result=result, check=locked, verifying=True).status
    checks_send_next(owner_id=check.bot.owner_id)
    return status


@dataclass(frozen=True)
class HealthTarget:
    """A bot the periodic health check calls."""

    bot_id: int
    owner_id: int
    url: str
    secret: str


# What the health check's calls hand over as each finishes: a bot's id and outcome; None last.
HealthOutcome = tuple[int, HelloResult] | None


async def _hello_all(targets: list[HealthTarget], done: queue.SimpleQueue[HealthOutcome]) -> None:
    """Call the bots' hello over one pool, at most CHECKS_IN_FLIGHT_PER_OWNER of one owner's
    at once, handing each outcome to ``done`` as it comes; a platform error leaves a bot out."""
    places = {
        owner: asyncio.Semaphore(settings.CHECKS_IN_FLIGHT_PER_OWNER)
        for owner in {t.owner_id for t in targets}
    }
    try:
        async with BotClient(limits=bot_limits(), policy=bot_network_policy()) as client:

            async def one(target: HealthTarget) -> None:
                async with places[target.owner_id]:
                    try:
                        answer = await client.hello(target.url, target.secret)
                        done.put((target.bot_id, HelloResult(True, round(answer.latency_ms))))
                    except BotFault as fault:
                        done.put((target.bot_id, _fault_result(fault)))
                    except ArenaError:
                        pass

            await asyncio.gather(*(one(target) for target in targets))
    finally:
        done.put(None)


def bots_check_health() -> dict[str, int]:
    """The periodic health check: hello every active bot and every bot disabled for failing.

    Repeated failures disable a bot with the reason shown to its owner, a refusal at once; a
    bot disabled for failing comes back as soon as it passes again. A bot disabled for
    refusing the platform's signature comes back only through a verification its owner asks
    for (docs/bot-protocol.md); bots disabled by staff are left alone. One owner's bots are
    called a few at a time, and each outcome is recorded as it comes, so one owner's many
    slow bots never hold up the record of another's.
    """
    bots = {
        bot.pk: bot
        for bot in Bot.objects.filter(
            Q(status=BotStatus.ACTIVE)
            | Q(status=BotStatus.DISABLED, disabled_cause=DisabledCause.HEALTH),
            reference_player="",  # played in-process: nothing to call
        ).only("pk", "owner_id", "endpoint_url", "secret")
    }
    targets = [HealthTarget(b.pk, b.owner_id, b.endpoint_url, b.secret) for b in bots.values()]
    done: queue.SimpleQueue[HealthOutcome] = queue.SimpleQueue()
    counts = {"checked": 0, "ok": 0, "failed": 0}
    with ThreadPoolExecutor(max_workers=1) as calls:
        called = calls.submit(asyncio.run, _hello_all(targets, done))
        while (outcome := done.get()) is not None:
            bot_id, result = outcome
            bot_record_check(bot=bots[bot_id], result=result)
            counts["checked"] += 1
            counts["ok" if result.ok else "failed"] += 1
        called.result()
    return counts
