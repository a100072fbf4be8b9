"""A variant's latest collusion scan and the pairs of bots it flagged (staff only)."""

from __future__ import annotations

from rest_framework import serializers

from tournaments.api.serializers.fields import VariantRefField


class CollusionQuery(serializers.Serializer):
    variant = VariantRefField(id_only=True)


class CollusionScanOutput(serializers.Serializer):
    """What the scan read and the rule it flagged by."""

    matches = serializers.IntegerField(help_text="rated matches the scanned sums cover: all")
    pairs_tested = serializers.IntegerField()
    bots_tested = serializers.IntegerField()
    min_tables = serializers.IntegerField(help_text="tables together a pair needed to be tested")
    min_repeat = serializers.IntegerField(
        help_text="tables together a table-mate needed to count in a bot's test"
    )
    false_discovery_rate = serializers.FloatField(
        help_text="a pair is flagged when its adjusted p-value is at most this"
    )
    scanned_at = serializers.DateTimeField()


class CollusionFlagOutput(serializers.Serializer):
    """A flagged pair with its evidence: results are shares of the other bots at a table (never
    the pair) a bot finished above; lift and drop are the same less what strengths predict."""

    beneficiary = serializers.IntegerField(source="beneficiary_id")
    beneficiary_name = serializers.CharField(source="beneficiary.name")
    partner = serializers.IntegerField(source="partner_id")
    partner_name = serializers.CharField(source="partner.name")
    tables = serializers.IntegerField(help_text="tables of three or more the pair shared")
    beneficiary_with = serializers.FloatField()
    beneficiary_without = serializers.FloatField()
    partner_with = serializers.FloatField()
    partner_without = serializers.FloatField()
    lift = serializers.FloatField()
    drop = serializers.FloatField()
    z = serializers.FloatField()
    p_value = serializers.FloatField()
    adjusted_p = serializers.FloatField(help_text="Benjamini-Hochberg over the pairs tested")


class CollusionBotFlagOutput(serializers.Serializer):
    """A bot whose table-mates did worse next to it than apart, more than chance allows over
    all of them: a ring's partners each giving up a little for it."""

    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")
    table_mates = serializers.IntegerField(help_text="table-mates tested")
    partners = serializers.IntegerField(help_text="of them, those who did worse next to it")
    tables = serializers.IntegerField(help_text="tables shared with the table-mates tested")
    statistic = serializers.FloatField(help_text="sum of the positive drop z's squared")
    p_value = serializers.FloatField()
    adjusted_p = serializers.FloatField(help_text="Benjamini-Hochberg over the bots tested")


class CollusionOutput(serializers.Serializer):
    scan = CollusionScanOutput(allow_null=True, help_text="null before the variant's first scan")
    flags = CollusionFlagOutput(many=True)
    bot_flags = CollusionBotFlagOutput(many=True)
