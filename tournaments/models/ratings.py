"""TrueSkill ratings per bot and variant, and every update applied to them."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from tournaments.maths.ratings import DEFAULT_MU, DEFAULT_SIGMA, conservative


class Rating(models.Model):
    """A bot's current TrueSkill rating in one variant."""

    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="ratings")
    variant = models.ForeignKey("Variant", on_delete=models.CASCADE, related_name="ratings")
    mu = models.FloatField(default=DEFAULT_MU)
    sigma = models.FloatField(default=DEFAULT_SIGMA)
    # Stored by the database so the leaderboard can sort on an index.
    conservative = models.GeneratedField(
        expression=conservative(models.F("mu"), models.F("sigma")),
        output_field=models.FloatField(),
        db_persist=True,
    )
    matches = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    # Not stored: set on the rows the bot page shows (tournaments/dashboard/views.py).
    provisional: bool
    three_sigma: float

    class Meta:
        ordering = ["variant", "-conservative"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "variant"], name="rating_unique_bot_variant"),
            models.CheckConstraint(condition=models.Q(sigma__gt=0), name="rating_sigma_positive"),
        ]
        indexes = [
            models.Index(fields=["variant", "-conservative", "bot"], name="rating_leaderboard_idx"),
            # The latest write of a variant's ratings keys the leaderboard's cached pages.
            models.Index(fields=["variant", "updated_at"], name="rating_variant_updated_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.bot} in {self.variant}: {self.mu:.2f} ± {self.sigma:.2f}"


class RatingHistory(models.Model):
    """One rating update: a bot's rating before and after one match."""

    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="rating_history")
    variant = models.ForeignKey("Variant", on_delete=models.CASCADE, related_name="rating_history")
    # Rated matches are permanent: deleting one would make a recompute disagree.
    # Empty on the rows that mark a new version of the bot (``version`` says which).
    match = models.ForeignKey(
        "Match", on_delete=models.PROTECT, null=True, blank=True, related_name="rating_updates"
    )
    version = models.PositiveIntegerField(
        null=True, blank=True, help_text="the bot's new version, on a row that marks one"
    )
    sequence = models.BigIntegerField(help_text="the match's rating_sequence, for ordering")
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_after = models.FloatField()
    # When the update counts: its match's (or duplicate group's last rotation's) end, or the
    # previous update's time if later, so times never decrease along the sequence and the
    # ratings on a date are a prefix of it; follows play, not when a recompute ran.
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["bot", "variant", "sequence"]
        verbose_name_plural = "rating history"
        constraints = [
            models.UniqueConstraint(fields=["match", "bot"], name="history_unique_bot_per_match"),
            models.CheckConstraint(
                condition=models.Q(match__isnull=True) ^ models.Q(version__isnull=True),
                name="history_match_or_version",
            ),
            models.CheckConstraint(
                condition=models.Q(sigma_before__gt=0, sigma_after__gt=0),
                name="history_sigma_positive",
            ),
        ]
        indexes = [
            # A bot's history a page at a time: an index-only scan of the bot's rows, which lie
            # together here while the table keeps them in the order they were rated.
            models.Index(
                fields=["bot", "variant", "sequence"],
                include=[
                    *("id", "match", "version", "at"),
                    *("mu_before", "sigma_before", "mu_after", "sigma_after"),
                ],
                name="history_bot_page_idx",
            ),
            models.Index(fields=["variant", "at"], name="history_variant_at_idx"),
            # A bot's ratings on a date: an index-only scan of its updates up to then.
            models.Index(fields=["bot", "at", "variant", "sequence"], name="history_bot_at_idx"),
            # The latest update, whose time the next one starts from.
            models.Index(fields=["sequence"], name="history_sequence_idx"),
        ]

    def __str__(self) -> str:
        if self.match_id is None:
            return f"{self.bot} at version {self.version}"
        return f"{self.bot} after match {self.match_id}"


class RecomputeStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    FINISHED = "finished", "finished"
    FAILED = "failed", "failed"


class RatingRecompute(models.Model):
    """A background rebuild of every rating from the stored results, with its progress."""

    requested_by = models.ForeignKey(
        "auth.User", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(
        max_length=16, choices=RecomputeStatus.choices, default=RecomputeStatus.QUEUED
    )
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # The attempt running the job beats while it works, so a recompute whose worker died is
    # noticed (recomputes_sweep_stale) and queued again rather than blocking every later one.
    claimed_by = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=RecomputeStatus.values), name="recompute_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(done__lte=models.F("total")), name="recompute_done_within_total"
            ),
        ]

    def __str__(self) -> str:
        return f"recompute {self.pk} ({self.status}, {self.done}/{self.total})"

    @property
    def percent(self) -> float:
        """Share done, 0..100."""
        return 100.0 * self.done / self.total if self.total else 0.0
