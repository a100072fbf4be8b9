"""Always-on ladders: one per variant, playing opted-in bots for as long as it runs."""

from __future__ import annotations

from django.db import models

from arena.timebank import DEFAULT_TIME_BANK_MS, MAX_TIME_BANK_MS
from tournaments.seeds import DEAL_SALT_BYTES, new_deal_salt

# The duplicate switch's help text, for staff in the admin and the API.
LADDER_DUPLICATE_HELP = (
    "Off (the default): every table is dealt afresh. On: each table's deals are replayed in "
    "every seat rotation and rated as one, which cancels the luck of the cards; but the bots "
    "play the same deals again and can remember them across rotations, and every card is "
    "played, so a bot that recalls what it saw knows the other seats' cards in the later "
    "rotations. Switch it on only when the code of every opted-in bot is trusted (e.g. "
    "reviewed course submissions)."
)


class LadderStatus(models.TextChoices):
    RUNNING = "running", "running"
    PAUSED = "paused", "paused"


class Ladder(models.Model):
    """A variant's continuous ladder: it never finishes, staff pause and resume it.

    It keeps ``LADDER_MATCHES_IN_FLIGHT`` tables queued or playing among the active bots whose
    owners opted them in. Each table is dealt from a seed of its own. When staff switch
    ``duplicate`` on, a table is a duplicate group instead: the same deals with the seats
    rotated, played one rotation after another and rated as one. Every card dealt is played, so
    a bot that remembers what it saw knows the other hands in the later rotations: duplicate
    suits only bots whose code the organiser trusts (``LADDER_DUPLICATE_HELP``).
    """

    variant = models.OneToOneField("Variant", on_delete=models.CASCADE, related_name="ladder")
    status = models.CharField(
        max_length=16, choices=LadderStatus.choices, default=LadderStatus.RUNNING
    )
    table_size = models.PositiveSmallIntegerField(default=4)
    time_limit_ms = models.PositiveIntegerField(default=1000)
    # Each seat's time bank in every match (docs/bot-protocol.md, "The time bank"); 0: none.
    time_bank_ms = models.PositiveIntegerField(default=DEFAULT_TIME_BANK_MS)
    duplicate = models.BooleanField(default=False, help_text=LADDER_DUPLICATE_HELP)
    # Keys this ladder's deals apart from every other competition's (tournaments/seeds.py).
    deal_salt = models.CharField(
        max_length=2 * DEAL_SALT_BYTES, default=new_deal_salt, unique=True, editable=False
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["variant__name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=LadderStatus.values), name="ladder_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(table_size__gte=3, table_size__lte=8),
                name="ladder_table_size_3_to_8",
            ),
            models.CheckConstraint(
                condition=models.Q(time_limit_ms__gte=10, time_limit_ms__lte=120000),
                name="ladder_time_limit_range",
            ),
            models.CheckConstraint(
                condition=models.Q(time_bank_ms__lte=MAX_TIME_BANK_MS),
                name="ladder_time_bank_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.variant.name} ladder"
