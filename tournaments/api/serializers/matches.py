"""Matches: their seats, faults and voided deals, each shown as the asker may see it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from engine.seeds import seed_sha256
from tournaments.models import (
    Match,
    MatchSeat,
    SeatFault,
    VoidedDeal,
    sees_bot_privately,
    sees_platform_errors,
)
from tournaments.selectors.matches import match_seed_revealed, seat_hidden


class SeatOutput(serializers.ModelSerializer):
    """A seat in a match list: who sat there and how it went."""

    bot = serializers.IntegerField(
        source="bot_id",
        allow_null=True,
        help_text="null while a ladder match is in play, but to the bot's owner and staff",
    )
    bot_name = serializers.CharField(source="bot.name", allow_null=True)

    class Meta:
        model = MatchSeat
        fields = ["seat", "bot", "bot_name", "score", "rank", "faults", "disqualified"]


class FaultOutput(serializers.ModelSerializer):
    """A fault; its sample (what the bot sent, or a connection error naming its host, port and
    path) only for the bot's owner and staff (``private`` in the context), else null."""

    sample = serializers.SerializerMethodField()

    class Meta:
        model = SeatFault
        fields = ["kind", "count", "sample", "latency_ms"]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_sample(self, fault: SeatFault) -> str | None:
        return fault.sample if self.context.get("private") else None


class SeatDetailOutput(SeatOutput):
    exact_bid_rate = serializers.FloatField(allow_null=True)
    fault_records = serializers.SerializerMethodField()

    class Meta(SeatOutput.Meta):
        fields = [
            *SeatOutput.Meta.fields,
            "bids_exact",
            "bids_total",
            "exact_bid_rate",
            "fault_records",
        ]

    @extend_schema_field(FaultOutput(many=True))
    def get_fault_records(self, seat: MatchSeat) -> list[dict[str, Any]]:
        request = self.context.get("request")
        private = request is not None and sees_bot_privately(request.user, seat.bot.owner_id)
        faults = seat.fault_records.all()
        return list(FaultOutput(faults, many=True, context={"private": private}).data)


class MatchOutput(serializers.ModelSerializer):
    variant = serializers.CharField(source="variant.name")
    tournament = serializers.IntegerField(source="tournament_id", allow_null=True)
    ladder = serializers.IntegerField(
        source="ladder_id",
        allow_null=True,
        help_text="the ladder the match was played on (/api/ladders/{id}/), null for a "
        "tournament's match",
    )
    scrimmage = serializers.IntegerField(
        source="scrimmage_id",
        allow_null=True,
        help_text="the scrimmage the match was played in (/api/scrimmages/{id}/, its owner's "
        "and staff's to see), null for a tournament's or a ladder's match",
    )
    has_replay = serializers.BooleanField()
    seats = SeatOutput(many=True)
    seed = serializers.SerializerMethodField(
        help_text="the deal's seed, null until the match has ended (then it matches seed_sha256)"
    )
    seed_sha256 = serializers.SerializerMethodField(
        help_text="SHA-256 of the seed's decimal text, published before the match is played"
    )
    rated = serializers.SerializerMethodField(
        help_text="whether the match changed the public ratings: a ladder's or a rated "
        "tournament's match, once the ratings were updated"
    )

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_seed(self, match: Match) -> int | None:
        return match.seed if match_seed_revealed(match) else None

    def to_representation(self, instance: Match) -> dict[str, Any]:
        """The match, with the seats the asker may not see blanked (``seat_hidden``)."""
        data = super().to_representation(instance)
        request = self.context.get("request")
        user = request.user if request is not None else AnonymousUser()
        owners = {seat.seat: seat.bot.owner_id for seat in instance.seats.all()}
        for seat in data["seats"]:
            if seat_hidden(match=instance, owner_id=owners[seat["seat"]], user=user):
                seat["bot"] = seat["bot_name"] = None
        return data

    def get_rated(self, match: Match) -> bool:
        return match.rating_sequence is not None

    def get_seed_sha256(self, match: Match) -> str:
        return seed_sha256(match.seed)

    class Meta:
        model = Match
        fields = [
            "id",
            "tournament",
            "ladder",
            "scrimmage",
            "variant",
            "round",
            "duplicate_group",
            "seed",
            "seed_sha256",
            "status",
            "attempts",
            "max_attempts",
            "rated",
            "started_at",
            "finished_at",
            "created_at",
            "has_replay",
            "seats",
        ]


class VoidedDealOutput(serializers.ModelSerializer):
    """A deal of the match that did not count, with the commitment it had; its seed is shown
    once the match has ended, as the match's own is (an attempt of it may still be playing on
    until then)."""

    seed_sha256 = serializers.SerializerMethodField(
        help_text="the commitment published while this was the match's deal"
    )
    seed = serializers.SerializerMethodField(
        help_text="the voided deal's seed, null until the match has ended (then it matches "
        "seed_sha256)"
    )

    class Meta:
        model = VoidedDeal
        fields = ["seed_sha256", "seed", "reason", "voided_at"]
        extra_kwargs = {
            "reason": {"help_text": "why the deal did not count, in general terms"},
        }

    def get_seed_sha256(self, deal: VoidedDeal) -> str:
        return seed_sha256(deal.seed)

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_seed(self, deal: VoidedDeal) -> int | None:
        # deal.match is the match being shown (Django sets it on its related rows).
        return deal.seed if match_seed_revealed(deal.match) else None


class MatchDetailOutput(MatchOutput):
    seats = SeatDetailOutput(many=True)
    voided_deals = VoidedDealOutput(
        many=True,
        help_text="deals of the match that did not count, oldest first: attempts the platform "
        "gave up on, after which the match was dealt anew (a duplicate group's rotation keeps "
        "the group's deal), and a deal superseded by a late outcome of an earlier one",
    )
    error = serializers.SerializerMethodField(
        help_text="the platform's last error with this match (empty when none); staff only, "
        "null for everyone else, who see that it failed from its status"
    )

    class Meta(MatchOutput.Meta):
        fields = [
            *MatchOutput.Meta.fields,
            "time_limit_ms",
            "time_bank_ms",
            "error",
            "rating_sequence",
            "voided_deals",
        ]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_error(self, match: Match) -> str | None:
        request = self.context.get("request")
        return match.error if request is not None and sees_platform_errors(request.user) else None
