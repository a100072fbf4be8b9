"""Scrimmages: what an owner asks for, and how their scrimmage and its matches stand."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from engine.dealing import MAX_SEED
from tournaments.api.serializers.fields import (
    TIME_BANK_HELP,
    StrictIntegerField,
    VariantRefField,
    time_bank_field,
)
from tournaments.api.serializers.matches import MatchOutput
from tournaments.models import ReferencePlayer, Scrimmage
from tournaments.selectors.scrimmages import scrimmage_matches, scrimmage_status


class ScrimmageInput(serializers.Serializer):
    bot = StrictIntegerField(min_value=1, help_text="your bot that practises (active)")
    opponents = serializers.ListField(
        child=StrictIntegerField(min_value=1),
        required=False,
        default=list,
        help_text="ids of bots to play: your own other bots, and other owners' bots whose "
        "owners accept scrimmages (accepts_scrimmages)",
    )
    reference_players = serializers.ListField(
        child=serializers.ChoiceField(choices=ReferencePlayer.choices),
        required=False,
        default=list,
        help_text="reference players to seat, each at most once: "
        + ", ".join(ReferencePlayer.values),
    )
    variant = VariantRefField(help_text="a preset or custom variant, by id or name")
    matches = StrictIntegerField(
        min_value=1,
        default=1,
        help_text="how many matches to play, the seats rotated each match "
        "(SCRIMMAGE_MAX_MATCHES at most)",
    )
    seed = StrictIntegerField(
        min_value=0,
        max_value=MAX_SEED,
        required=False,
        allow_null=True,
        default=None,
        help_text="fix the deals: match i is dealt from the first 8 bytes of SHA-256 of "
        "'ohhell scrimmage deal:<seed>:<i>', shifted right by one bit; never a ladder's or "
        "tournament's deal. Without it each match is dealt from a fresh random seed",
    )
    time_limit_ms = StrictIntegerField(
        min_value=10, max_value=120_000, required=False, allow_null=True, default=None
    )
    time_bank_ms = time_bank_field()


class ScrimmageBotOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    reference_player = serializers.CharField(
        help_text="the reference player this house bot plays, empty for a registered bot"
    )


class ScrimmageOutput(serializers.ModelSerializer):
    """A scrimmage as its owner (and staff) see it; nobody else sees it at all."""

    url = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField(help_text="queued, running, finished or cancelled")
    bot = ScrimmageBotOutput()
    opponents = serializers.SerializerMethodField()
    variant = serializers.CharField(source="variant.name")
    matches_ended = serializers.IntegerField(source="ended")
    finished_at = serializers.DateTimeField(allow_null=True, help_text="when its last match ended")

    class Meta:
        model = Scrimmage
        extra_kwargs = {
            "time_bank_ms": {"help_text": TIME_BANK_HELP},
            "cancelled_at": {"help_text": "when it was cancelled; null unless it was"},
            "cancel_reason": {
                "help_text": "why: by its owner, or which bot could no longer be played"
            },
        }
        fields = [
            "id",
            "url",
            "status",
            "bot",
            "opponents",
            "variant",
            "match_count",
            "matches_ended",
            "seed",
            "time_limit_ms",
            "time_bank_ms",
            "created_at",
            "finished_at",
            "cancelled_at",
            "cancel_reason",
        ]

    def get_url(self, scrimmage: Scrimmage) -> str:
        request = self.context.get("request")
        return reverse("scrimmage-detail", kwargs={"pk": scrimmage.pk}, request=request)

    def get_status(self, scrimmage: Any) -> str:
        return scrimmage_status(
            match_count=scrimmage.match_count,
            ended=scrimmage.ended,
            started=scrimmage.started,
            cancelled=scrimmage.cancelled_at is not None,
        )

    @extend_schema_field(ScrimmageBotOutput(many=True))
    def get_opponents(self, scrimmage: Scrimmage) -> list[dict[str, Any]]:
        bots = [entry.bot for entry in scrimmage.opponent_entries.all()]
        return list(ScrimmageBotOutput(bots, many=True).data)


class ScrimmageDetailOutput(ScrimmageOutput):
    matches = serializers.SerializerMethodField(
        help_text="its matches in playing order, with each seat's result; a match's replay is "
        "at /api/matches/{id}/replay/ once it has finished"
    )

    class Meta(ScrimmageOutput.Meta):
        fields = [*ScrimmageOutput.Meta.fields, "matches"]

    @extend_schema_field(MatchOutput(many=True))
    def get_matches(self, scrimmage: Scrimmage) -> list[dict[str, Any]]:
        matches = scrimmage_matches(scrimmage=scrimmage)
        return list(MatchOutput(matches, many=True, context=self.context).data)
