"""The batch ranks of a variant's bots, each with its bootstrap interval."""

from __future__ import annotations

from rest_framework import serializers

from tournaments.api.serializers.fields import VariantRefField


class RankIntervalsQuery(serializers.Serializer):
    variant = VariantRefField(id_only=True)


class RankIntervalOutput(serializers.Serializer):
    """A bot's rank in the variant's batch fit and the ranks 90% of the refits gave it."""

    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")
    rank = serializers.IntegerField(help_text="the bot's place in the fit of all the matches read")
    low = serializers.IntegerField(
        allow_null=True, help_text="5th percentile rank of the refits; null: too few matches"
    )
    high = serializers.IntegerField(
        allow_null=True, help_text="95th percentile rank of the refits; null: too few matches"
    )
    interval = serializers.CharField(source="text", help_text='in words: "3rd; 2nd-5th at 90%"')
    strength = serializers.FloatField(help_text="Plackett-Luce log-strength, mean 0")
    matches = serializers.IntegerField(help_text="the bot's matches among those fitted")
    fitted_matches = serializers.IntegerField(
        source="fit.matches", help_text="rated matches in the fit: the variant's latest"
    )
    resamples = serializers.IntegerField(source="fit.resamples")
    fitted_at = serializers.DateTimeField(source="fit.fitted_at")
