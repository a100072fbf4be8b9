"""Matches (one game at one table), their seats, faults, replays and voided deals."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from arena.timebank import MAX_TIME_BANK_MS
from tournaments.models.faults import FaultKind
from tournaments.seeds import new_seed


class MatchStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    FINISHED = "finished", "finished"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


class Match(models.Model):
    """One game between bots, queued for a worker to claim, play and record.

    ``claimed_by``/``claimed_at`` are set by a conditional UPDATE, so one worker plays a match
    at a time; ``rating_sequence`` orders rating updates so a recompute gives the same numbers.
    ``rated`` says the rating writer has handled the finished match; it changed the public
    ratings when it has a ``rating_sequence`` too (a ladder's match, or a rated tournament's).
    """

    tournament = models.ForeignKey(
        "Tournament", on_delete=models.CASCADE, null=True, blank=True, related_name="matches"
    )
    # Set for the matches of an always-on ladder (which have no tournament).
    ladder = models.ForeignKey(
        "Ladder", on_delete=models.PROTECT, null=True, blank=True, related_name="matches"
    )
    # Set for the matches of an owner's scrimmage: unrated and shown to its owner and staff only.
    scrimmage = models.ForeignKey(
        "Scrimmage", on_delete=models.CASCADE, null=True, blank=True, related_name="matches"
    )
    variant = models.ForeignKey("Variant", on_delete=models.PROTECT, related_name="matches")
    round = models.PositiveIntegerField(default=0)
    duplicate_group = models.CharField(max_length=64, blank=True, db_index=True)
    # A ladder's round: tables rated as one update once all have ended (Ladder.round_tables).
    table_round = models.CharField(max_length=64, blank=True)
    seed = models.BigIntegerField(default=new_seed)
    time_limit_ms = models.PositiveIntegerField(default=1000)
    # Each seat's time bank, copied from the competition when the match is made: a match plays
    # with the bank it was created under. 0: none (as every match made before banks existed).
    time_bank_ms = models.PositiveIntegerField(default=0)
    status = models.CharField(
        max_length=16, choices=MatchStatus.choices, default=MatchStatus.QUEUED
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    max_attempts = models.PositiveSmallIntegerField(default=3)
    claimed_by = models.CharField(max_length=200, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # A queued tournament match not yet sent to the workers: a tournament keeps only
    # TOURNAMENT_MATCHES_IN_FLIGHT of its matches sent and unfinished at once (``_send_window``
    # in tournaments/services/tournaments.py). Not claimable until sent.
    unsent = models.BooleanField(default=False)
    rated = models.BooleanField(default=False)
    rated_at = models.DateTimeField(null=True, blank=True)
    rating_sequence = models.BigIntegerField(null=True, blank=True)
    # Set when the match was rated together with the other rotations of its duplicate group
    # (one TrueSkill update from the deal-by-deal comparison) or the other tables of its ladder
    # round (one update by points); a recompute does the same. Each rated group has a name of
    # its own ("tournament:group#first sequence", or "ladder-id:group#first sequence"), so
    # matches retried after the others were rated form a second update, in a recompute too.
    rating_group = models.CharField(max_length=120, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "matches"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=MatchStatus.values), name="match_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(max_attempts__gte=1, attempts__lte=models.F("max_attempts")),
                name="match_attempts_bounded",
            ),
            models.CheckConstraint(
                condition=~models.Q(status=MatchStatus.FINISHED)
                | models.Q(finished_at__isnull=False),
                name="match_finished_has_time",
            ),
            # A handled match of an unrated tournament has no sequence: it changed no rating.
            models.CheckConstraint(
                condition=models.Q(rated=False, rated_at__isnull=True, rating_sequence__isnull=True)
                | models.Q(rated=True, status=MatchStatus.FINISHED, rated_at__isnull=False),
                name="match_rated_is_finished",
            ),
            models.UniqueConstraint(
                fields=["rating_sequence"], name="match_rating_sequence_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(tournament__isnull=True, ladder__isnull=True)
                | models.Q(tournament__isnull=True, scrimmage__isnull=True)
                | models.Q(ladder__isnull=True, scrimmage__isnull=True),
                name="match_one_competition",
            ),
            models.CheckConstraint(
                condition=models.Q(time_bank_ms__lte=MAX_TIME_BANK_MS),
                name="match_time_bank_range",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "created_at"], name="match_queue_idx"),
            models.Index(fields=["tournament", "status"], name="match_tournament_status_idx"),
            models.Index(fields=["tournament", "round"], name="match_tournament_round_idx"),
            models.Index(fields=["ladder", "status"], name="match_ladder_status_idx"),
            models.Index(fields=["scrimmage", "round"], name="match_scrimmage_round_idx"),
            # A ladder's tables of a time range: those leaving the shares' window, and the
            # day's tables a first count reads (tournaments/services/shares.py).
            models.Index(
                fields=["ladder", "created_at"],
                condition=models.Q(ladder__isnull=False),
                name="match_ladder_recent_idx",
            ),
            # The next of a tournament's matches to send, in the order they were made.
            models.Index(
                fields=["tournament", "id"],
                condition=models.Q(unsent=True),
                name="match_unsent_idx",
            ),
            models.Index(
                fields=["finished_at", "id"],
                condition=models.Q(status=MatchStatus.FINISHED, rated=False),
                name="match_unrated_idx",
            ),
            # The tables of a ladder round, which the rating writer waits for.
            models.Index(
                fields=["ladder", "table_round"],
                condition=~models.Q(table_round=""),
                name="match_table_round_idx",
            ),
            # A recompute loads each rated group by its name.
            models.Index(
                fields=["rating_group"],
                condition=~models.Q(rating_group=""),
                name="match_rating_group_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.pk} ({self.status})"


class MatchSeat(models.Model):
    """A bot's place at a match table, and its result once the match is recorded."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    bot = models.ForeignKey("Bot", on_delete=models.PROTECT, related_name="seats")
    score = models.IntegerField(null=True, blank=True)
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    bids_exact = models.PositiveSmallIntegerField(default=0)
    bids_total = models.PositiveSmallIntegerField(default=0)
    faults = models.PositiveIntegerField(default=0)
    disqualified = models.BooleanField(default=False)
    # The bot answered no request of the match but refused each one's signature (401 or 403):
    # it is left out of the match's rating (tournaments/selectors/rated_matches.py), unless it had
    # refused another match within REFUSAL_GRACE_DAYS (``refusal_counted``): then it ranks last.
    refused_every_request = models.BooleanField(default=False)
    refusal_counted = models.BooleanField(default=False)

    # Not stored: set by the match page (tournaments/dashboard/views.py) on the seats it shows.
    private: bool
    hidden: bool

    class Meta:
        ordering = ["match", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["match", "seat"], name="seat_unique_index_per_match"),
            models.UniqueConstraint(fields=["match", "bot"], name="seat_unique_bot_per_match"),
            models.CheckConstraint(condition=models.Q(seat__lte=7), name="seat_index_0_to_7"),
            models.CheckConstraint(
                condition=models.Q(rank__isnull=True) | models.Q(rank__gte=1, rank__lte=8),
                name="seat_rank_1_to_8",
            ),
            models.CheckConstraint(
                condition=models.Q(bids_exact__lte=models.F("bids_total")),
                name="seat_exact_bids_within_total",
            ),
        ]
        indexes = [models.Index(fields=["bot", "match"], name="seat_bot_match_idx")]

    def __str__(self) -> str:
        return f"{self.bot} at seat {self.seat} of match {self.match_id}"

    @property
    def exact_bid_rate(self) -> float | None:
        """Share of deals the bot made its bid exactly, or None before any deal."""
        return self.bids_exact / self.bids_total if self.bids_total else None


class SeatFault(models.Model):
    """How often one seat committed one kind of fault in a match, with one sample."""

    seat = models.ForeignKey(MatchSeat, on_delete=models.CASCADE, related_name="fault_records")
    kind = models.CharField(max_length=32, choices=FaultKind.choices)
    count = models.PositiveIntegerField(default=1)
    sample = models.CharField(max_length=500, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["seat", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["seat", "kind"], name="fault_unique_kind_per_seat"),
            models.CheckConstraint(condition=models.Q(count__gte=1), name="fault_count_positive"),
            models.CheckConstraint(
                condition=models.Q(kind__in=FaultKind.values), name="fault_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} x{self.count}"


class VoidReason(models.TextChoices):
    """Why an attempt's deal was voided: public and generic, never the platform's error text
    (``Match.error``, shown to staff only)."""

    WORKER_LOST = "worker_lost", "worker stopped"
    PLATFORM_ERROR = "platform_error", "platform error"
    # A late outcome of an earlier deal counted instead (first writer wins).
    SUPERSEDED = "superseded", "superseded by an earlier deal"


class VoidedDeal(models.Model):
    """A deal a match was given that did not count.

    The platform gave up on an attempt whose bots saw part of its deal, so the match was dealt
    anew (tournaments/services/matches.py, ``_release``); or a late outcome of an earlier deal
    was recorded instead, superseding this one (``_write_outcome``). An attempt of the deal may
    still be playing on until the match has ended, so its seed is shown only then, under the
    same rule as the match's own seed (tournaments/seeds.py), for anyone to check against the
    commitment ``seed_sha256`` published while it was the match's deal.
    """

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="voided_deals")
    seed = models.BigIntegerField()
    reason = models.CharField(max_length=32, choices=VoidReason.choices)
    voided_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["match", "voided_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(seed__gte=0), name="voided_seed_not_negative"
            ),
            models.CheckConstraint(
                condition=models.Q(reason__in=VoidReason.values), name="voided_reason_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"deal voided from match {self.match_id} ({self.reason})"


class Replay(models.Model):
    """The full record of a match, stored in the database so any worker or web host can serve it."""

    match = models.OneToOneField(
        Match, on_delete=models.CASCADE, primary_key=True, related_name="replay"
    )
    format_version = models.PositiveSmallIntegerField(default=1)
    data = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"replay of match {self.match_id}"
