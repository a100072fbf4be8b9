"""Bots registered by their owners, and the history of their health checks."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from arena.probes import ProbeKind
from tournaments.models.faults import FaultKind

BOT_NAME_VALIDATOR = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
    "Use letters, digits, '-', '_' and '.', starting with a letter or digit.",
)


def probe_warnings(kinds: list[str]) -> list[str]:
    """Stored probe kinds in words; a kind this code does not know is left out."""
    known = {str(kind): kind for kind in ProbeKind}
    return [f"{known[kind]}: {known[kind].warning}" for kind in kinds if kind in known]


class BotStatus(models.TextChoices):
    PENDING = "pending", "pending verification"
    ACTIVE = "active", "active"
    DISABLED = "disabled", "disabled"


class DisabledCause(models.TextChoices):
    """Why a bot is disabled: a health failure or a refusal clears itself when the bot passes
    verification again."""

    NONE = "", "not disabled"
    HEALTH = "health", "failed health checks"
    REFUSED = "refused", "refused the platform's signature"
    ADMIN = "admin", "disabled by staff"


class ReferencePlayer(models.TextChoices):
    """The reference players (engine/players/) a scrimmage may seat: each is one house bot that
    the worker plays in-process (tournaments/services/runs.py), never over the network."""

    RANDOM = "random", "random"
    HEURISTIC = "heuristic", "heuristic"
    SEARCH = "search", "search"


class Bot(models.Model):
    """An HTTP endpoint that plays Oh Hell, owned by one user."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bots"
    )
    name = models.CharField(max_length=64, validators=[BOT_NAME_VALIDATOR])
    description = models.CharField(max_length=500, blank=True)
    endpoint_url = models.CharField(max_length=500)
    # Kept retrievable because the arena signs every request with it (HMAC); never serialised.
    secret = models.CharField(max_length=128)
    status = models.CharField(max_length=16, choices=BotStatus.choices, default=BotStatus.PENDING)
    disabled_cause = models.CharField(max_length=16, choices=DisabledCause.choices, blank=True)
    disabled_reason = models.CharField(max_length=500, blank=True)
    last_verified_at = models.DateTimeField(null=True, blank=True)
    # The latest completed check, passed or failed, so "Last verified" never hides a failure.
    last_check = models.ForeignKey(
        "BotHealthCheck", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The signing probes (arena/probes.py) the bot accepted at its latest verification.
    security_warnings = models.JSONField(default=list, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    # The owner's choice to play on the always-on ladders; only active bots are scheduled.
    ladder_opt_in = models.BooleanField(default=False)
    # The owner's consent to be entered in tournaments organised by other users.
    accept_invitations = models.BooleanField(default=False)
    # The owner's consent to be an opponent in other owners' scrimmages (unrated practice).
    accepts_scrimmages = models.BooleanField(default=False)
    # Set on the house bots that stand for the reference players (tournaments/services/
    # scrimmages.py makes them); blank for every bot an owner registered.
    reference_player = models.CharField(max_length=16, choices=ReferencePlayer.choices, blank=True)
    # Raised by bot_new_version: the bot keeps its name, matches and mu; sigma goes up.
    version = models.PositiveIntegerField(default=1)
    # Every address the endpoint's host resolved to at the last passed check: bots at one
    # address are one team (one server sees all their hands), so ladders keep them apart.
    # Staff only: where another owner's bot runs stays private.
    endpoint_addresses = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="bot_name_unique_ci"),
            models.CheckConstraint(
                condition=models.Q(status__in=BotStatus.values), name="bot_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(
                    status=BotStatus.DISABLED,
                    disabled_cause__in=[
                        DisabledCause.HEALTH,
                        DisabledCause.REFUSED,
                        DisabledCause.ADMIN,
                    ],
                )
                | (
                    ~models.Q(status=BotStatus.DISABLED)
                    & models.Q(disabled_cause=DisabledCause.NONE)
                ),
                name="bot_disabled_has_cause",
            ),
            models.CheckConstraint(condition=~models.Q(secret=""), name="bot_secret_not_empty"),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="bot_version_positive"),
            models.UniqueConstraint(
                fields=["reference_player"],
                condition=~models.Q(reference_player=""),
                name="bot_one_per_reference_player",
            ),
        ]
        indexes = [
            # The list is paged in name order: an index lets PostgreSQL read one page, not sort all.
            models.Index(fields=["name"], name="bot_name_idx"),
            models.Index(fields=["created_at"], name="bot_created_at_idx"),
            models.Index(fields=["status", "name"], name="bot_status_name_idx"),
            models.Index(fields=["owner", "name"], name="bot_owner_name_idx"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_playable(self) -> bool:
        """Tell whether the bot may be entered into matches."""
        return self.status == BotStatus.ACTIVE

    @property
    def security_warning_texts(self) -> list[str]:
        """The signing probes the bot accepted at its latest verification, in words."""
        return probe_warnings(self.security_warnings)


class SharedHost(models.Model):
    """An address that staff vouch hosts the bots of many people, e.g. a course's server with
    every student's bot on a port of its own: bots there are not one team by address (their
    owners still are each a team of their own)."""

    address = models.GenericIPAddressField(unique=True, unpack_ipv4=True)
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["address"]

    def __str__(self) -> str:
        return f"{self.address} ({self.note})" if self.note else self.address


class HealthCheckStatus(models.TextChoices):
    """Where a health check stands: queued for a worker, or its outcome."""

    PENDING = "pending", "pending"
    OK = "ok", "passed"
    FAILED = "failed", "failed"


class BotVersion(models.Model):
    """A new version of a bot, marked by its owner: its ratings keep mu with sigma raised.

    Applied by the rating writer in time order with the matches (``rating_sequence`` shares
    their numbering), so a recompute raises sigma at exactly the same point.
    """

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    # The floor sigma is raised to (RATING_VERSION_SIGMA when marked), kept for recomputes.
    sigma_floor = models.FloatField()
    created_at = models.DateTimeField(default=timezone.now)
    rating_sequence = models.BigIntegerField(null=True, blank=True, unique=True)

    class Meta:
        ordering = ["bot", "version"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "version"], name="botversion_unique_version"),
            models.CheckConstraint(
                condition=models.Q(version__gte=2, sigma_floor__gt=0),
                name="botversion_after_first_floor_positive",
            ),
        ]
        indexes = [
            models.Index(
                fields=["created_at", "id"],
                condition=models.Q(rating_sequence__isnull=True),
                name="botversion_unapplied_idx",
            )
        ]

    def __str__(self) -> str:
        return f"{self.bot} version {self.version}"


class BotHealthCheck(models.Model):
    """One call of a bot's ``hello``: at registration, on demand or by the periodic sweep.

    A check asked for (registration, a new endpoint, the API, the pages, the admin) is stored
    pending (``ok`` is null) and completed by a worker, so no web request waits on a bot. It
    waits in its owner's backlog until ``sent_at``, when it is handed to the workers
    (tournaments/services/checks.py); the periodic sweep's checks are stored done, never sent.
    """

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="health_checks")
    at = models.DateTimeField(auto_now_add=True)
    ok = models.BooleanField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    error_kind = models.CharField(max_length=32, choices=FaultKind.choices, blank=True)
    error_message = models.CharField(max_length=500, blank=True)
    # The signing probes (arena/probes.py) the bot accepted; checks that sent none leave it empty.
    warnings = models.JSONField(default=list, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ok=True, error_kind="")
                | models.Q(ok=False) & ~models.Q(error_kind="")
                | models.Q(ok__isnull=True, error_kind=""),
                name="healthcheck_error_iff_failed",
            ),
        ]
        indexes = [
            models.Index(fields=["bot", "-at"], name="healthcheck_bot_at_idx"),
            models.Index(
                fields=["at"], condition=models.Q(ok__isnull=True), name="healthcheck_pending_idx"
            ),
        ]

    def __str__(self) -> str:
        outcome = self.error_kind if self.ok is False else self.status
        return f"{self.bot} {outcome} at {self.at:%Y-%m-%d %H:%M}"

    @property
    def warning_texts(self) -> list[str]:
        """The signing probes the bot accepted at this check, in words."""
        return probe_warnings(self.warnings)

    @property
    def status(self) -> HealthCheckStatus:
        """Pending until a worker has called the bot, then its outcome."""
        if self.ok is None:
            return HealthCheckStatus.PENDING
        return HealthCheckStatus.OK if self.ok else HealthCheckStatus.FAILED
