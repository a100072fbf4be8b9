"""Bots: registering and changing one, how anyone sees it, and its health checks."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tournaments.api.serializers.fields import StrictBooleanField, StrictCharField
from tournaments.models import (
    Bot,
    BotHealthCheck,
    HealthCheckStatus,
    is_email_confirmed,
    sees_bot_privately,
)
from tournaments.netpolicy import MAX_URL_LENGTH
from tournaments.services.ladders import CONFIRM_EMAIL


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
    accepts_scrimmages = StrictBooleanField(
        required=False,
        help_text="let other owners choose the bot as an opponent in their unrated scrimmages "
        "(default false)",
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
    warnings = serializers.SerializerMethodField()

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_error_message(self, check: BotHealthCheck) -> str | None:
        return check.error_message if self.context.get("private") else None

    @extend_schema_field(serializers.ListField(child=serializers.CharField(), allow_null=True))
    def get_warnings(self, check: BotHealthCheck) -> list[str] | None:
        """The signing probes the bot accepted, in words: owner and staff only."""
        return check.warning_texts if self.context.get("private") else None

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
            "warnings",
        ]


class BotOutput(serializers.ModelSerializer):
    """A bot as anyone may see it; the endpoint only for its owner and staff, the secret never."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    endpoint_url = serializers.SerializerMethodField()
    disabled_reason = serializers.SerializerMethodField()
    last_check = serializers.SerializerMethodField()
    security_warnings = serializers.SerializerMethodField()
    ladder_waiting = serializers.SerializerMethodField()

    class Meta:
        model = Bot
        fields = [
            "id",
            "name",
            "owner",
            "description",
            "endpoint_url",
            "status",
            "disabled_cause",
            "disabled_reason",
            "last_verified_at",
            "last_check",
            "security_warnings",
            "consecutive_failures",
            "ladder_opt_in",
            "ladder_waiting",
            "accept_invitations",
            "accepts_scrimmages",
            "reference_player",
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

    @extend_schema_field(HealthCheckOutput(allow_null=True))
    def get_last_check(self, bot: Bot) -> dict | None:
        """The latest completed check, passed or failed (``last_verified_at`` is the latest
        pass); its error text for the owner and staff only."""
        if bot.last_check is None:
            return None
        private = sees_bot_privately(self.context["request"].user, bot.owner_id)
        return HealthCheckOutput(bot.last_check, context={"private": private}).data

    @extend_schema_field(serializers.ListField(child=serializers.CharField(), allow_null=True))
    def get_security_warnings(self, bot: Bot) -> list[str] | None:
        """The signing probes the bot accepted at its latest verification, in words: for the
        owner and staff only, since they tell how to drive the bot."""
        if sees_bot_privately(self.context["request"].user, bot.owner_id):
            return bot.security_warning_texts
        return None

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_ladder_waiting(self, bot: Bot) -> str | None:
        """Why the bot, opted in, is seated at no ladder table: its owner's email address is
        not confirmed. For the owner and staff only (it tells of the owner's account); null
        otherwise."""
        if not bot.ladder_opt_in or not sees_bot_privately(
            self.context["request"].user, bot.owner_id
        ):
            return None
        return None if is_email_confirmed(bot.owner) else CONFIRM_EMAIL

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
