"""What a bot's analytics are read from: per seat, its deals tallied as the match was recorded."""

from __future__ import annotations

from django.db import models


class SeatTally(models.Model):
    """One seat's deals of one finished match that share a hand size and a place at the table
    relative to the dealer: how many, how many bid exactly, and the points they scored.

    Written with the match's outcome (tournaments/services/analytics.py) from its replay, so
    the analytics of a bot sum these rows through an index instead of reading replays. A seat
    has one row per (hand size, place) pair it met: at most one per deal of the match.
    """

    seat = models.ForeignKey("MatchSeat", on_delete=models.CASCADE, related_name="tallies")
    # The seat's bot and the match's variant, copied so a bot's rows are read by one index.
    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="+")
    variant = models.ForeignKey("Variant", on_delete=models.CASCADE, related_name="+")
    players = models.PositiveSmallIntegerField(help_text="seats at the table")
    hand_size = models.PositiveSmallIntegerField()
    after_dealer = models.PositiveSmallIntegerField(
        help_text="seats after the dealer, clockwise: 1 bids first, 0 is the dealer, who bids last"
    )
    deals = models.PositiveSmallIntegerField()
    exact = models.PositiveSmallIntegerField(help_text="deals whose bid was made exactly")
    points = models.IntegerField(help_text="points the deals scored, without any winner bonus")

    class Meta:
        ordering = ["seat", "hand_size", "after_dealer"]
        constraints = [
            models.UniqueConstraint(
                fields=["seat", "hand_size", "after_dealer"], name="tally_unique_per_seat"
            ),
            models.CheckConstraint(
                condition=models.Q(exact__lte=models.F("deals"), deals__gte=1),
                name="tally_exact_within_deals",
            ),
            models.CheckConstraint(
                condition=models.Q(after_dealer__lt=models.F("players")),
                name="tally_place_at_the_table",
            ),
        ]
        indexes = [
            # A bot's analytics in a variant: an index-only scan of its rows.
            models.Index(
                fields=["bot", "variant", "hand_size", "players", "after_dealer"],
                include=["deals", "exact", "points"],
                name="tally_bot_variant_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"seat {self.seat_id}: {self.deals} deals of {self.hand_size} cards"
