"""Variants: defining one, and how it reads with its rules explained."""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tournaments.api.serializers.fields import StrictCharField
from tournaments.models import Variant
from tournaments.selectors.variants import variant_rules


class VariantInput(serializers.Serializer):
    name = StrictCharField(max_length=64)
    base = StrictCharField(max_length=64)
    options = serializers.DictField(child=serializers.JSONField(), allow_empty=True, default=dict)
    description = StrictCharField(max_length=1000, required=False, allow_blank=True)

    def validate_options(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(value) > 64:
            raise serializers.ValidationError("Too many options.")
        # Stored as jsonb, which cannot hold NUL; the engine never accepts one anyway.
        if "\\u0000" in json.dumps(value):
            raise serializers.ValidationError("Null characters are not allowed.")
        return value


class VariantOutput(serializers.ModelSerializer):
    created_by = serializers.CharField(
        source="created_by.username",
        default=None,
        read_only=True,
        allow_null=True,
        help_text="null for the presets",
    )

    class Meta:
        model = Variant
        fields = ["name", "base", "is_preset", "description", "created_by", "created_at"]


class VariantRulesOutput(serializers.Serializer):
    valid = serializers.BooleanField()
    problem = serializers.CharField()
    min_players = serializers.IntegerField(required=False)
    max_players = serializers.IntegerField(required=False)
    rules = serializers.ListField(child=serializers.CharField())
    options_help = serializers.DictField(child=serializers.CharField())


class VariantDetailOutput(VariantOutput):
    rules = serializers.SerializerMethodField()

    class Meta(VariantOutput.Meta):
        fields = [*VariantOutput.Meta.fields, "options", "rules"]

    @extend_schema_field(VariantRulesOutput)
    def get_rules(self, variant: Variant) -> dict[str, Any]:
        return variant_rules(variant=variant)
