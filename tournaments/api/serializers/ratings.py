"""Ratings: the leaderboard, a bot's ratings and their history, and recomputing them all."""

from __future__ import annotations

from rest_framework import serializers

from tournaments.api.serializers.fields import QueryDateTimeField, VariantRefField
from tournaments.api.serializers.rows import Column, ShapedRows, Shown
from tournaments.models import Rating, RatingHistory


class LeaderboardQuery(serializers.Serializer):
    variant = VariantRefField(id_only=True)
    include_provisional = serializers.BooleanField(default=True)


class LeaderboardRowOutput(ShapedRows, serializers.ModelSerializer):
    columns = (
        Column("rank", serializers.IntegerField()),
        Column("bot", serializers.IntegerField(), attribute="bot_id"),
        Column("bot_name", serializers.CharField()),
        Column("version", serializers.IntegerField(help_text="the bot's version")),
        Column("owner", serializers.CharField()),
        Column("mu"),
        Column("sigma"),
        Column("conservative"),
        Column("matches"),
        Column(
            "provisional",
            serializers.BooleanField(read_only=True),
            attribute="matches",
            shown=Shown.PROVISIONAL,
        ),
        Column("updated_at", shown=Shown.TIME),
    )

    class Meta:
        model = Rating


class BotRatingsQuery(serializers.Serializer):
    at = QueryDateTimeField(required=False, default=None)


class RatingHistoryQuery(BotRatingsQuery):
    variant = VariantRefField(id_only=True, required=False, default=None)


class BotRatingOutput(ShapedRows, serializers.Serializer):
    """A bot's rating in one variant: now, or as it stood at the asked time."""

    columns = (
        Column("variant", serializers.CharField(), attribute="variant_name"),
        Column("mu", serializers.FloatField()),
        Column("sigma", serializers.FloatField()),
        Column("conservative", serializers.FloatField()),
        Column("matches", serializers.IntegerField()),
        Column(
            "provisional", serializers.BooleanField(), attribute="matches", shown=Shown.PROVISIONAL
        ),
        Column(
            "as_of",
            serializers.DateTimeField(help_text="when the rating last changed"),
            shown=Shown.TIME,
        ),
        Column(
            "match",
            serializers.IntegerField(
                allow_null=True, help_text="the match of the last update (with ?at= only)"
            ),
            attribute="match_id",
        ),
    )


class RatingHistoryOutput(ShapedRows, serializers.ModelSerializer):
    columns = (
        Column(
            "match",
            serializers.IntegerField(
                allow_null=True, help_text="empty on a row marking a new bot version"
            ),
            attribute="match_id",
        ),
        Column(
            "version",
            serializers.IntegerField(
                allow_null=True, help_text="the bot's new version, on a row that marks one"
            ),
        ),
        Column("variant", serializers.CharField(), attribute="variant_name"),
        Column("sequence"),
        Column("at", shown=Shown.TIME),
        Column("mu_before"),
        Column("sigma_before"),
        Column("mu_after"),
        Column("sigma_after"),
    )

    class Meta:
        model = RatingHistory


class RecomputeOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.FloatField()
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    attempts = serializers.IntegerField(help_text="how many workers have started it")
    heartbeat_at = serializers.DateTimeField(
        allow_null=True, help_text="when the worker running it last reported"
    )


class RecomputeConflictDetail(serializers.Serializer):
    recompute = RecomputeOutput()


class RecomputeConflictError(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    detail = RecomputeConflictDetail()


class RecomputeConflictOutput(serializers.Serializer):
    """409: a recompute is already queued or running; the body names it."""

    error = RecomputeConflictError()
