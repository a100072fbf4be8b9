"""Input validation and output shapes; no business rules here."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tournaments.models import Bot, BotHealthCheck, HealthCheckStatus, Variant, sees_bot_privately
from tournaments.netpolicy import MAX_URL_LENGTH
from tournaments.selectors.variants import variant_rules


class StrictCharField(serializers.CharField):
    """A string field that refuses numbers and booleans instead of converting them."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class SignUpInput(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=128, write_only=True, trim_whitespace=False)
    email = serializers.EmailField(required=False, allow_blank=True, max_length=254)


class TokenInput(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=128, write_only=True, trim_whitespace=False)


class TokenOutput(serializers.Serializer):
    token = serializers.CharField()
    username = serializers.CharField()


class StrictBooleanField(serializers.BooleanField):
    """A JSON true or false; strings and numbers are refused instead of guessed at."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class BotInput(serializers.Serializer):
    name = StrictCharField(max_length=64)
    endpoint_url = StrictCharField(max_length=MAX_URL_LENGTH)
    description = StrictCharField(max_length=500, required=False, allow_blank=True)
    ladder_opt_in = StrictBooleanField(
        required=False,
        help_text="play on the always-on ladders; only while the bot is active (verified)",
    )
    accept_invitations = StrictBooleanField(
        required=False,
        help_text="let other users enter the bot in their tournaments (default false)",
    )


class BotNewVersionInput(serializers.Serializer):
    endpoint_url = StrictCharField(
        max_length=MAX_URL_LENGTH,
        required=False,
        help_text="where the new version answers, when it moved (it is verified again)",
    )


class HealthCheckOutput(serializers.ModelSerializer):
    """A check: ``pending`` until a worker has called the bot (``ok`` is null until then).

    The error text can name the bot's host, port and path: shown to its owner and staff only
    (``private`` in the context), null for everyone else, who see the fault kind.
    """

    status = serializers.ChoiceField(choices=HealthCheckStatus.choices, read_only=True)
    error_message = serializers.SerializerMethodField()

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_error_message(self, check: BotHealthCheck) -> str | None:
        return check.error_message if self.context.get("private") else None

    class Meta:
        model = BotHealthCheck
        fields = [
            "id",
            "status",
            "at",
            "ok",
            "latency_ms",
            "error_kind",
            "error_message",
        ]


class BotOutput(serializers.ModelSerializer):
    """A bot as anyone may see it; the endpoint only for its owner and staff, the secret never."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    endpoint_url = serializers.SerializerMethodField()
    disabled_reason = serializers.SerializerMethodField()

    class Meta:
        model = Bot
        fields = [
            "id",
            "name",
            "owner",
            "description",
            "endpoint_url",
            "status",
            "disabled_reason",
            "last_verified_at",
            "consecutive_failures",
            "ladder_opt_in",
            "accept_invitations",
            "version",
            "created_at",
            "updated_at",
        ]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_disabled_reason(self, bot: Bot) -> str | None:
        """Why the bot is disabled, for its owner and staff (it may quote its endpoint)."""
        if sees_bot_privately(self.context["request"].user, bot.owner_id):
            return bot.disabled_reason
        return bot.get_disabled_cause_display() if bot.disabled_cause else ""

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_endpoint_url(self, bot: Bot) -> str | None:
        private = sees_bot_privately(self.context["request"].user, bot.owner_id)
        return bot.endpoint_url if private else None


class BotWithSecretOutput(BotOutput):
    """Answered once, at registration or rotation: the only time the secret leaves the server."""

    secret = serializers.SerializerMethodField()

    class Meta(BotOutput.Meta):
        fields = [*BotOutput.Meta.fields, "secret"]

    def get_secret(self, bot: Bot) -> str:
        return self.context["secret"]


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
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)

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


class UserOutput(serializers.ModelSerializer):
    class Meta:
        model = get_user_model()
        fields = ["id", "username", "email"]
