"""TrueSkill ratings per bot and variant, and every update applied to them."""

from __future__ import annotations

from django.db import models

DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3


class Rating(models.Model):
    """A bot's current TrueSkill rating in one variant."""

    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="ratings")
    variant = models.ForeignKey("Variant", on_delete=models.CASCADE, related_name="ratings")
    mu = models.FloatField(default=DEFAULT_MU)
    sigma = models.FloatField(default=DEFAULT_SIGMA)
    # Stored by the database so the leaderboard can sort on an index.
    conservative = models.GeneratedField(
        expression=models.F("mu") - 3 * models.F("sigma"),
        output_field=models.FloatField(),
        db_persist=True,
    )
    matches = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["variant", "-conservative"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "variant"], name="rating_unique_bot_variant"),
            models.CheckConstraint(condition=models.Q(sigma__gt=0), name="rating_sigma_positive"),
        ]
        indexes = [
            models.Index(fields=["variant", "-conservative", "bot"], name="rating_leaderboard_idx")
        ]

    def __str__(self) -> str:
        return f"{self.bot} in {self.variant}: {self.mu:.2f} ± {self.sigma:.2f}"


class RatingHistory(models.Model):
    """One rating update: a bot's rating before and after one match."""

    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="rating_history")
    variant = models.ForeignKey("Variant", on_delete=models.CASCADE, related_name="rating_history")
    # Rated matches are permanent: deleting one would make a recompute disagree.
    match = models.ForeignKey("Match", on_delete=models.PROTECT, related_name="rating_updates")
    sequence = models.BigIntegerField(help_text="the match's rating_sequence, for ordering")
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_after = models.FloatField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["bot", "variant", "sequence"]
        verbose_name_plural = "rating history"
        constraints = [
            models.UniqueConstraint(fields=["match", "bot"], name="history_unique_bot_per_match"),
            models.CheckConstraint(
                condition=models.Q(sigma_before__gt=0, sigma_after__gt=0),
                name="history_sigma_positive",
            ),
        ]
        indexes = [
            models.Index(fields=["bot", "variant", "sequence"], name="history_bot_variant_seq_idx"),
            models.Index(fields=["variant", "at"], name="history_variant_at_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.bot} after match {self.match_id}"
