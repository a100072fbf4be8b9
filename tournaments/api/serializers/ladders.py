"""Ladders: opening one, and how it reads."""

from __future__ import annotations

from rest_framework import serializers

from tournaments.api.serializers.fields import (
    TIME_BANK_HELP,
    StrictBooleanField,
    StrictIntegerField,
    VariantRefField,
    time_bank_field,
)
from tournaments.maths.ratings import ROUND_TABLES
from tournaments.models import Ladder
from tournaments.models.ladders import LADDER_DUPLICATE_HELP, LADDER_ROUND_HELP, MAX_ROUND_TABLES


class LadderInput(serializers.Serializer):
    variant = VariantRefField()
    table_size = StrictIntegerField(min_value=3, max_value=8, default=4)
    time_limit_ms = StrictIntegerField(min_value=10, max_value=120_000, required=False)
    time_bank_ms = time_bank_field()
    duplicate = StrictBooleanField(default=False, help_text=LADDER_DUPLICATE_HELP)
    round_tables = StrictIntegerField(
        min_value=1, max_value=MAX_ROUND_TABLES, default=ROUND_TABLES, help_text=LADDER_ROUND_HELP
    )


class LadderOutput(serializers.ModelSerializer):
    variant = serializers.CharField(source="variant.name")
    matches_in_flight = serializers.IntegerField(help_text="ladder matches queued or playing")
    matches_finished = serializers.IntegerField()

    class Meta:
        model = Ladder
        extra_kwargs = {"time_bank_ms": {"help_text": TIME_BANK_HELP}}
        fields = [
            "id",
            "variant",
            "status",
            "table_size",
            "time_limit_ms",
            "time_bank_ms",
            "duplicate",
            "round_tables",
            "matches_in_flight",
            "matches_finished",
            "created_at",
            "updated_at",
        ]
