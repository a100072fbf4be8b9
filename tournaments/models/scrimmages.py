"""Scrimmages: an owner's unrated practice matches of one bot against opponents they chose.

A scrimmage is a competition of its own kind, beside tournaments and ladders: its matches are
ordinary ``Match`` rows (``Match.scrimmage``) played by the workers of the scrimmage queue,
recorded with seats, faults and replays like any match, never rated, and shown only to the
owner who asked and to staff (tournaments/selectors/matches.py, ``matches_visible_to``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models

from arena.timebank import DEFAULT_TIME_BANK_MS, MAX_TIME_BANK_MS

if TYPE_CHECKING:
    from tournaments.models.bots import Bot


class ScrimmageStatus(models.TextChoices):
    """Where a scrimmage stands, read from its matches (tournaments/selectors/scrimmages.py)."""

    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    FINISHED = "finished", "finished"
    CANCELLED = "cancelled", "cancelled"


class Scrimmage(models.Model):
    """A short series of unrated matches of ``bot`` against ``opponents``, asked for by its owner.

    With ``seed`` set (the owner's choice) match ``i`` is dealt from ``scrimmage_deal_seed(seed,
    i)`` (tournaments/seeds.py), which the owner can compute: the deal is theirs to know, and it
    is never the deal of a ladder or tournament. Without it every match is dealt from a seed of
    its own drawn from the CSPRNG.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scrimmages"
    )
    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="scrimmages")
    variant = models.ForeignKey("Variant", on_delete=models.PROTECT, related_name="scrimmages")
    match_count = models.PositiveSmallIntegerField()
    seed = models.BigIntegerField(null=True, blank=True)
    time_limit_ms = models.PositiveIntegerField(default=1000)
    # Each seat's time bank in every match of the scrimmage (arena/timebank.py); 0 for none.
    time_bank_ms = models.PositiveIntegerField(default=DEFAULT_TIME_BANK_MS)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when the scrimmage was cancelled, by its owner or because one of its bots may no
    # longer be played (tournaments/services/scrimmage_lane.py); its matches not yet ended were
    # cancelled with it, and the reason says why.
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancel_reason = models.CharField(max_length=300, blank=True, default="")
    opponents: models.ManyToManyField[Bot, ScrimmageOpponent] = models.ManyToManyField(
        "Bot", through="ScrimmageOpponent", related_name="scrimmages_faced"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(match_count__gte=1), name="scrimmage_match_count_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(seed__isnull=True) | models.Q(seed__gte=0),
                name="scrimmage_seed_not_negative",
            ),
            models.CheckConstraint(
                condition=models.Q(time_limit_ms__gte=10, time_limit_ms__lte=120000),
                name="scrimmage_time_limit_range",
            ),
            models.CheckConstraint(
                condition=models.Q(time_bank_ms__lte=MAX_TIME_BANK_MS),
                name="scrimmage_time_bank_range",
            ),
        ]
        indexes = [models.Index(fields=["owner", "created_at"], name="scrimmage_owner_day_idx")]

    def __str__(self) -> str:
        return f"scrimmage {self.pk} of {self.bot_id}"


class ScrimmageOpponent(models.Model):
    """One opponent of a scrimmage, in the order the owner listed them."""

    scrimmage = models.ForeignKey(
        Scrimmage, on_delete=models.CASCADE, related_name="opponent_entries"
    )
    bot = models.ForeignKey("Bot", on_delete=models.PROTECT, related_name="scrimmage_entries")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["scrimmage", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["scrimmage", "bot"], name="scrimmage_opponent_unique_bot"
            ),
            models.UniqueConstraint(
                fields=["scrimmage", "position"], name="scrimmage_opponent_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} in scrimmage {self.scrimmage_id}"
