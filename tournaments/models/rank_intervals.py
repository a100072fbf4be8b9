"""Batch fits of each variant's rated history: every bot's rank with a bootstrap interval."""

from __future__ import annotations

from django.db import models

from tournaments.maths.intervals import interval_text


class RankFit(models.Model):
    """The latest batch fit of one variant's rated matches (tournaments/maths/intervals.py)."""

    variant = models.OneToOneField("Variant", on_delete=models.CASCADE, related_name="rank_fit")
    matches = models.PositiveIntegerField(help_text="rated matches fitted: the variant's latest")
    # A hash of the finishing orders fitted and the settings applied: the same gives the same fit.
    digest = models.CharField(max_length=64)
    resamples = models.PositiveIntegerField(help_text="bootstrap refits behind the intervals")
    fitted_at = models.DateTimeField(help_text="when the matches fitted were read")

    def __str__(self) -> str:
        return f"rank fit of {self.variant_id} over {self.matches} matches"


class RankInterval(models.Model):
    """A bot's place in its variant's batch fit, and the ranks 90% of the refits gave it.

    ``low`` and ``high`` are empty for a bot with too few matches in the fit
    (``RANK_INTERVALS_MIN_MATCHES``) for the interval to mean much.
    """

    fit = models.ForeignKey(RankFit, on_delete=models.CASCADE, related_name="intervals")
    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="rank_intervals")
    rank = models.PositiveIntegerField()
    low = models.PositiveIntegerField(null=True, blank=True)
    high = models.PositiveIntegerField(null=True, blank=True)
    strength = models.FloatField(help_text="Plackett-Luce log-strength, mean 0 over the fit")
    matches = models.PositiveIntegerField(help_text="the bot's matches among those fitted")

    class Meta:
        ordering = ["fit", "rank", "bot"]
        constraints = [
            models.UniqueConstraint(fields=["fit", "bot"], name="rank_interval_unique_bot"),
            models.CheckConstraint(condition=models.Q(rank__gte=1), name="rank_interval_rank_1_up"),
            models.CheckConstraint(
                condition=models.Q(low__isnull=True, high__isnull=True)
                | models.Q(low__gte=1, high__gte=models.F("low")),
                name="rank_interval_low_to_high",
            ),
        ]
        indexes = [models.Index(fields=["fit", "rank", "bot"], name="rank_interval_board_idx")]

    def __str__(self) -> str:
        return f"{self.bot_id}: {self.text}"

    @property
    def text(self) -> str:
        """The rank and its interval in words: "3rd; 2nd-5th at 90%"."""
        return interval_text(self.rank, self.low, self.high)
