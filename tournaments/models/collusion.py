"""Collusion scans of each variant's rated history: the pairs of bots whose results stand out."""

from __future__ import annotations

from django.db import models


class CollusionScan(models.Model):
    """The latest collusion scan of one variant's rated matches (tournaments/collusion.py)."""

    variant = models.OneToOneField(
        "Variant", on_delete=models.CASCADE, related_name="collusion_scan"
    )
    matches = models.PositiveIntegerField(help_text="rated matches scanned: the variant's latest")
    pairs_tested = models.PositiveIntegerField(
        help_text="pairs of bots with enough tables together and apart to be tested"
    )
    min_tables = models.PositiveIntegerField(help_text="tables together a pair needed")
    false_discovery_rate = models.FloatField(help_text="adjusted p-value at or below which flagged")
    # A hash of the finishing orders scanned and the settings applied: the same gives the same scan.
    digest = models.CharField(max_length=64)
    scanned_at = models.DateTimeField(help_text="when the matches scanned were read")

    def __str__(self) -> str:
        return f"collusion scan of {self.variant_id} over {self.matches} matches"


class CollusionFlag(models.Model):
    """A pair of bots the scan flagged: the beneficiary does better against the other bots at
    the tables it shares with the partner, and the partner worse, than either does apart.

    Results are shares of the other bots at a table (never the pair) a bot finished above;
    ``lift`` and ``drop`` are the same less what the batch strengths predict.
    """

    scan = models.ForeignKey(CollusionScan, on_delete=models.CASCADE, related_name="flags")
    beneficiary = models.ForeignKey(
        "Bot", on_delete=models.CASCADE, related_name="collusion_benefits"
    )
    partner = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="collusion_partners")
    tables = models.PositiveIntegerField(help_text="tables of three or more the pair shared")
    beneficiary_with = models.FloatField(help_text="beneficiary's result at the shared tables")
    beneficiary_without = models.FloatField(help_text="beneficiary's result at its other tables")
    partner_with = models.FloatField(help_text="partner's result at the shared tables")
    partner_without = models.FloatField(help_text="partner's result at its other tables")
    lift = models.FloatField(help_text="beneficiary's gain with the partner, strength-adjusted")
    drop = models.FloatField(help_text="partner's loss with the beneficiary, strength-adjusted")
    z = models.FloatField(help_text="(lift + drop) over its standard error")
    p_value = models.FloatField()
    adjusted_p = models.FloatField(help_text="Benjamini-Hochberg over the pairs tested")

    class Meta:
        ordering = ["scan", "adjusted_p", "p_value", "beneficiary", "partner"]
        constraints = [
            models.UniqueConstraint(
                fields=["scan", "beneficiary", "partner"], name="collusion_flag_unique_pair"
            ),
            models.CheckConstraint(
                condition=~models.Q(beneficiary=models.F("partner")),
                name="collusion_flag_two_bots",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.beneficiary_id} helped by {self.partner_id} (p {self.adjusted_p:.2g})"
