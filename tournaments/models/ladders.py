"""Always-on ladders: one per variant, playing opted-in bots for as long as it runs."""

from __future__ import annotations

import secrets

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import ExpressionWrapper

from arena.timebank import DEFAULT_TIME_BANK_MS, MAX_TIME_BANK_MS
from tournaments.maths.ratings import ROUND_TABLES
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
MAX_ROUND_TABLES = 16
LADDER_ROUND_HELP = (
    f"How many tables, started one after another with no bot at two of them and no owner or "
    f"endpoint address at two of them, are rated as one update of all their bots, ranked by "
    f"points (default {ROUND_TABLES}; 1 rates every table alone). The update waits for the "
    f"round's last table to end. A duplicate ladder rates each table's rotations as one instead."
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
    round_tables = models.PositiveSmallIntegerField(
        default=ROUND_TABLES,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_ROUND_TABLES)],
        help_text=LADDER_ROUND_HELP,
    )
    # The round new tables join while it has room, none of its tables has ended and they share
    # no team with it (``round_keys`` in tournaments/services/ladders.py); "" before the first.
    current_round = models.CharField(max_length=64, blank=True, editable=False)
    # The ladder's shares (LadderShare) count its tables made at or after this time, the
    # matchmaker's window; None until a top-up first counts them (tournaments/services/shares.py).
    shares_since = models.DateTimeField(null=True, blank=True, editable=False)
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
            models.CheckConstraint(
                condition=models.Q(round_tables__gte=1, round_tables__lte=MAX_ROUND_TABLES),
                name="ladder_round_tables_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.variant.name} ladder"


def new_tiebreak() -> int:
    """A share's place among the shares owed as much as it is, drawn afresh as its tables
    change."""
    return secrets.randbelow(2**31)


# A share's ``owed`` (tournaments/formats/matchmaking.py), as its index orders the shares.
SHARE_OWED = ExpressionWrapper(
    (models.F("tables") + 1.0) / models.F("weight"), output_field=models.FloatField()
)


class LadderShare(models.Model):
    """How much one bot played on one ladder in the matchmaker's window: its tables not
    cancelled, how many of them it sat at each seat position, and how many shares of the
    tables it is owed (``weight_of`` its rating in the ladder's variant).

    Kept as tables are made, cancelled and leave the window and as ratings change
    (tournaments/services/shares.py); every bot opted into the ladders has one on every ladder
    that counts its shares. A top-up reads them in the order of ``SHARE_OWED``, so it reads
    about as many as its slate holds, whatever the field's size or the ladder's history.
    """

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="shares")
    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="ladder_shares")
    tables = models.PositiveIntegerField(default=0)
    # Tables by seat position: seats[i] at seat i.
    seats = models.JSONField(default=list)
    weight = models.FloatField(default=1.0)
    tiebreak = models.IntegerField(default=new_tiebreak)
    # Out of the index while its bot cannot be seated (opted out, disabled, pending, an
    # unconfirmed account), so top-ups do not read past it: set as the window moves, and
    # cleared at once by whatever lets a bot play again (tournaments/services/shares.py).
    parked = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["ladder", "bot"], name="ladder_share_one_per_bot"),
            models.CheckConstraint(condition=models.Q(weight__gt=0), name="ladder_share_weight"),
        ]
        indexes = [
            models.Index(
                models.F("ladder"),
                SHARE_OWED,
                models.F("tiebreak"),
                name="ladder_share_owed_idx",
                condition=models.Q(parked=False),
            ),
        ]

    def __str__(self) -> str:
        return f"bot {self.bot_id} on ladder {self.ladder_id}: {self.tables} tables"
