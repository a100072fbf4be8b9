"""Collusion in each variant's rated history: running sums per bot and per pair of bots, kept as
matches are rated, and the latest scan of them with the pairs and bots whose results stand out."""

from __future__ import annotations

from django.db import models


class CollusionBotTotal(models.Model):
    """A bot's results in one variant's rated units, summed (tournaments/maths/collusion.py):
    its residual against the others at each unit, written with the unit's ratings."""

    variant = models.ForeignKey("Variant", on_delete=models.CASCADE, related_name="+")
    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="+")
    n = models.PositiveIntegerField()
    total = models.FloatField()
    squares = models.FloatField()
    raw = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["variant", "bot"], name="collusion_bot_total_unique")
        ]


class CollusionPairTotal(models.Model):
    """Two bots' results at the rated units of one variant they shared, summed
    (``PairSums`` of tournaments/maths/collusion.py, stored as its flat list)."""

    variant = models.ForeignKey("Variant", on_delete=models.CASCADE, related_name="+")
    first = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="+")
    tables = models.PositiveIntegerField(help_text="units of three or more bots shared")
    sums = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["variant", "first", "second"], name="collusion_pair_total_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(first__lt=models.F("second")), name="collusion_pair_ordered"
            ),
        ]
        # A scan reads only the pairs that met often enough to count.
        indexes = [models.Index(fields=["variant", "tables"], name="collusion_pair_tables")]


class CollusionScan(models.Model):
    """The latest collusion scan of one variant's sums (tournaments/maths/collusion.py)."""

    variant = models.OneToOneField(
        "Variant", on_delete=models.CASCADE, related_name="collusion_scan"
    )
    matches = models.PositiveIntegerField(help_text="rated matches the sums scanned cover: all")
    pairs_tested = models.PositiveIntegerField(
        help_text="pairs of bots with enough tables together and apart to be tested"
    )
    bots_tested = models.PositiveIntegerField(
        default=0, help_text="bots with a table-mate they shared min_repeat tables with"
    )
    min_tables = models.PositiveIntegerField(help_text="tables together a pair needed")
    min_repeat = models.PositiveIntegerField(
        default=0, help_text="tables together a table-mate needed to count in a bot's test"
    )
    false_discovery_rate = models.FloatField(help_text="adjusted p-value at or below which flagged")
    # A hash of the rated matches covered and the settings applied: the same gives the same scan.
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


class CollusionBotFlag(models.Model):
    """A bot the scan flagged: the table-mates it shared ``min_repeat`` tables or more with did
    worse next to it than apart, more than chance allows over all of them (a ring's partners
    each giving up a little for it)."""

    scan = models.ForeignKey(CollusionScan, on_delete=models.CASCADE, related_name="bot_flags")
    bot = models.ForeignKey("Bot", on_delete=models.CASCADE, related_name="collusion_bot_flags")
    table_mates = models.PositiveIntegerField(help_text="table-mates tested")
    partners = models.PositiveIntegerField(help_text="of them, those who did worse next to it")
    tables = models.PositiveIntegerField(help_text="tables shared with the table-mates tested")
    statistic = models.FloatField(help_text="sum of the positive drop z's squared")
    p_value = models.FloatField()
    adjusted_p = models.FloatField(help_text="Benjamini-Hochberg over the bots tested")

    class Meta:
        ordering = ["scan", "adjusted_p", "p_value", "bot"]
        constraints = [
            models.UniqueConstraint(fields=["scan", "bot"], name="collusion_bot_flag_unique")
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} lifted by {self.partners} table-mates (p {self.adjusted_p:.2g})"
