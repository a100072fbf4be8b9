"""Tournaments and the bots entered in them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models

from arena.timebank import DEFAULT_TIME_BANK_MS, MAX_TIME_BANK_MS
from tournaments.seeds import DEAL_SALT_BYTES, new_deal_salt, new_seed

if TYPE_CHECKING:
    from tournaments.models.bots import Bot


class TournamentFormat(models.TextChoices):
    ROUND_ROBIN = "round_robin", "round robin"
    DUPLICATE = "duplicate", "duplicate"
    SWISS = "swiss", "Swiss"
    LADDER = "ladder", "continuous ladder"


# What ``rounds`` means in each format: the API schema's help text and docs/tournaments.md say these
# words (a test compares them).
ROUNDS_MEANING: dict[str, str] = {
    TournamentFormat.ROUND_ROBIN: (
        "each bot plays at least `rounds` matches, rounded up so that every bot plays the same "
        "number (exactly `rounds` full rounds when the table size divides the number of bots)"
    ),
    TournamentFormat.DUPLICATE: (
        "the round robin's tables for `rounds`, each then replayed in every seat rotation: "
        "each bot plays at least `rounds` x table size matches"
    ),
    TournamentFormat.SWISS: (
        "the number of Swiss rounds; each round seats every bot once or gives it a bye"
    ),
    TournamentFormat.LADDER: (
        "the match budget: `rounds` x bots / table size matches in all (about `rounds` per "
        "bot), then the event finishes"
    ),
}

# How each format's standings are ordered: the standings answer and the dashboard say it.
RANKING_RULE: dict[str, str] = {
    TournamentFormat.ROUND_ROBIN: "by total score; equal totals share a place",
    TournamentFormat.DUPLICATE: (
        "by duplicate score: the sum, deal by deal, of the bot's points minus the mean of the "
        "same seat and deal over its group's rotations (positive: it made more of those cards "
        "than the others did); equal scores share a place"
    ),
    TournamentFormat.SWISS: (
        "by Swiss points: table size minus finishing rank in each match (a shared rank shares "
        "the points), and a bye counts as an average result, (table size - 1) / 2; then by "
        "total score; bots equal on both share a place"
    ),
    TournamentFormat.LADDER: "by total score; equal totals share a place",
}


# How each format deals its matches: the API schema's help text of ``format``,
# docs/tournaments.md and the tournament page say these words (a test compares them).
# Duplicate replays deals, which a bot can remember, so its words say who it is for.
FRESH_DEALS = "every match is dealt from a seed of its own"
DEALS: dict[str, str] = {
    TournamentFormat.ROUND_ROBIN: FRESH_DEALS,
    TournamentFormat.DUPLICATE: (
        "each table's deals are replayed in every seat rotation, so the bots play the same "
        "deals again and can remember them across rotations: every card is played, and a bot "
        "that recalls what it saw knows the other seats' cards in the later rotations. Only "
        "for bots whose code the organiser trusts (e.g. reviewed course submissions)"
    ),
    TournamentFormat.SWISS: FRESH_DEALS,
    TournamentFormat.LADDER: FRESH_DEALS,
}


def rounds_help() -> str:
    """The help text of ``rounds``: its meaning in every format."""
    meanings = "; ".join(f"{fmt}: {text}" for fmt, text in ROUNDS_MEANING.items())
    return f"What rounds means depends on the format. {meanings}."


def format_help() -> str:
    """The help text of ``format``: how every format deals its matches."""
    deals = "; ".join(f"{fmt}: {text}" for fmt, text in DEALS.items())
    return f"How the format deals its matches. {deals}."


class TournamentStatus(models.TextChoices):
    DRAFT = "draft", "draft"
    SCHEDULED = "scheduled", "scheduled"
    STARTING = "starting", "starting"
    RUNNING = "running", "running"
    PAUSED = "paused", "paused"
    FINISHED = "finished", "finished"
    CANCELLED = "cancelled", "cancelled"


class Tournament(models.Model):
    """A competition in one variant: its format decides how fixtures are generated."""

    name = models.CharField(max_length=100)
    description = models.CharField(max_length=1000, blank=True)
    organiser = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="organised_tournaments"
    )
    variant = models.ForeignKey("Variant", on_delete=models.PROTECT, related_name="tournaments")
    format = models.CharField(max_length=16, choices=TournamentFormat.choices)
    status = models.CharField(
        max_length=16, choices=TournamentStatus.choices, default=TournamentStatus.DRAFT
    )
    table_size = models.PositiveSmallIntegerField(default=4)
    time_limit_ms = models.PositiveIntegerField(default=1000)
    # Each seat's time bank in every match (docs/bot-protocol.md, "The time bank"); 0: none.
    time_bank_ms = models.PositiveIntegerField(default=DEFAULT_TIME_BANK_MS)
    rounds = models.PositiveIntegerField(default=1)
    games_per_fixture = models.PositiveIntegerField(default=1)
    seed = models.BigIntegerField(default=new_seed)
    # Whether its matches change the variant's public ratings; only staff set it, so an
    # organiser cannot feed their own bot weak opponents (tournaments/services/ratings.py).
    rated = models.BooleanField(
        default=False,
        help_text="set by staff only: the matches change the variant's public ratings",
    )
    # Keys this tournament's deals apart from every other competition's (tournaments/seeds.py).
    deal_salt = models.CharField(
        max_length=2 * DEAL_SALT_BYTES, default=new_deal_salt, unique=True, editable=False
    )
    start_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    bots: models.ManyToManyField[Bot, TournamentEntry] = models.ManyToManyField(
        "Bot", through="TournamentEntry", related_name="tournaments"
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(format__in=TournamentFormat.values),
                name="tournament_format_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=TournamentStatus.values),
                name="tournament_status_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(table_size__gte=3, table_size__lte=8),
                name="tournament_table_size_3_to_8",
            ),
            models.CheckConstraint(
                condition=models.Q(time_limit_ms__gte=10, time_limit_ms__lte=120000),
                name="tournament_time_limit_range",
            ),
            models.CheckConstraint(
                condition=models.Q(time_bank_ms__lte=MAX_TIME_BANK_MS),
                name="tournament_time_bank_range",
            ),
            models.CheckConstraint(
                condition=models.Q(rounds__gte=1), name="tournament_rounds_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(games_per_fixture__gte=1), name="tournament_games_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(finished_at__isnull=True)
                | models.Q(started_at__isnull=False, finished_at__gte=models.F("started_at")),
                name="tournament_finishes_after_start",
            ),
        ]
        indexes = [models.Index(fields=["status", "start_at"], name="tournament_status_start_idx")]

    def __str__(self) -> str:
        return self.name


class TournamentEntry(models.Model):
    """A bot entered in a tournament."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="entries")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tournament", "bot"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "bot"], name="entry_unique_bot_per_tournament"
            )
        ]
        verbose_name_plural = "tournament entries"

    def __str__(self) -> str:
        return f"{self.bot} in {self.tournament}"
