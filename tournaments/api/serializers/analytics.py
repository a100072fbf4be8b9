"""A bot's analytics in one variant: the query and the output shapes."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tournaments.api.serializers.fields import VariantRefField


class BotAnalyticsQuery(serializers.Serializer):
    variant = VariantRefField(required=False, default=None)


class DealLineOutput(serializers.Serializer):
    deals = serializers.IntegerField()
    exact = serializers.IntegerField(help_text="deals whose bid was made exactly")
    exact_rate = serializers.FloatField()
    points = serializers.IntegerField(help_text="points scored, without any winner bonus")
    points_per_deal = serializers.FloatField()


class HandSizeOutput(DealLineOutput):
    hand_size = serializers.IntegerField(source="key")


class PlaceOutput(DealLineOutput):
    players = serializers.IntegerField(help_text="seats at the table")
    after_dealer = serializers.IntegerField(
        source="key", help_text="seats after the dealer: 1 bids first, 0 is the dealer"
    )
    place = serializers.CharField()


class OpponentOutput(serializers.Serializer):
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="name")
    tables = serializers.IntegerField(help_text="finished matches shared")
    ahead = serializers.IntegerField(help_text="tables where this bot scored more")
    level = serializers.IntegerField()
    behind = serializers.IntegerField(help_text="tables where this bot scored less")


class FaultPeriodOutput(serializers.Serializer):
    start = serializers.DateTimeField()
    matches = serializers.IntegerField()
    faults = serializers.IntegerField()
    per_match = serializers.FloatField()
    disqualified = serializers.IntegerField()


class RatingPointOutput(serializers.Serializer):
    match = serializers.IntegerField(help_text="rated matches of the variant played by then")
    at = serializers.DateTimeField()
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    conservative = serializers.FloatField(help_text="mu - 3 sigma, the rating ranked by")


class PlayedVariantOutput(serializers.Serializer):
    variant = serializers.CharField(source="name")
    matches = serializers.IntegerField()


class BotAnalyticsOutput(serializers.Serializer):
    bot = serializers.IntegerField(source="bot_id")
    variant = serializers.CharField()
    matches = serializers.IntegerField(help_text="finished matches of the variant")
    deals = serializers.IntegerField()
    exact = serializers.IntegerField()
    exact_rate = serializers.FloatField(allow_null=True)
    points = serializers.IntegerField()
    points_per_deal = serializers.FloatField(allow_null=True)
    by_hand_size = HandSizeOutput(many=True)
    by_place = PlaceOutput(many=True)
    opponents = OpponentOutput(many=True)
    fault_period = serializers.CharField(help_text="minute, hour, day, week or month")
    faults = FaultPeriodOutput(many=True, help_text="the latest periods, oldest first")
    rated_matches = serializers.IntegerField()
    rating = RatingPointOutput(
        many=True,
        help_text="the rating before the first rated match (match 0), then after at most 500 "
        "of them, evenly spread, the latest always among them",
    )


# Only null: no string fits. (drf-spectacular drops an enum of null alone.)
@extend_schema_field({"type": "string", "nullable": True, "maxLength": 0})
class NullField(serializers.Field):
    """Always null: what tells the answer without analytics from the one with them."""

    def to_representation(self, value: Any) -> None:
        return None


class BotAnalyticsAnswer(BotAnalyticsOutput):
    """The answer with analytics: those of the variant asked for or played most."""

    variants = PlayedVariantOutput(many=True, help_text="the variants with finished matches")


class NoAnalyticsAnswer(serializers.Serializer):
    """The answer for a bot without a finished match, when no variant is asked for."""

    bot = serializers.IntegerField()
    variant = NullField(help_text="null: no finished match yet")
    variants = PlayedVariantOutput(many=True, help_text="empty")
