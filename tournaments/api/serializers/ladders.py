"""Ladders: opening one, and how it reads."""

from __future__ import annotations

from rest_framework import serializers

from tournaments.api.serializers.fields import (
    StrictBooleanField,
    StrictIntegerField,
    VariantRefField,
)
from tournaments.models import Ladder
from tournaments.models.ladders import LADDER_DUPLICATE_HELP


class LadderInput(serializers.Serializer):
    variant = VariantRefField()
    table_size = StrictIntegerField(min_value=3, max_value=8, default=4)
    time_limit_ms = StrictIntegerField(min_value=10, max_value=120_000, required=False)
    duplicate = StrictBooleanField(default=False, help_text=LADDER_DUPLICATE_HELP)


class LadderOutput(serializers.ModelSerializer):
    variant = serializers.CharField(source="variant.name")
    matches_in_flight = serializers.IntegerField(help_text="ladder matches queued or playing")
    matches_finished = serializers.IntegerField()

    class Meta:
        model = Ladder
        fields = [
            "id",
            "variant",
            "status",
            "table_size",
            "time_limit_ms",
            "duplicate",
            "matches_in_flight",
            "matches_finished",
            "created_at",
            "updated_at",
        ]
