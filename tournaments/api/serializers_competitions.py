"""Input validation and output shapes for tournaments, matches and ratings; no business rules."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from engine.seeds import seed_sha256
from tournaments.api.serializers import StrictBooleanField, StrictCharField
from tournaments.models import (
    Ladder,
    Match,
    MatchSeat,
    Rating,
    RatingHistory,
    SeatFault,
    Tournament,
    TournamentFormat,
    TournamentStatus,
    Variant,
    VoidedDeal,
    sees_bot_privately,
    sees_platform_errors,
)
from tournaments.models.competitions import format_help, rounds_help
from tournaments.models.ladders import LADDER_DUPLICATE_HELP
from tournaments.rating_math import is_provisional
from tournaments.selectors.matches import match_seed_revealed
from tournaments.selectors.ratings import BotRating, HistoryRow, LeaderboardRow
from tournaments.selectors.variants import MAX_ID, variant_by_ref, variant_id_by_ref
from tournaments.services.tournaments import MAX_ENTRIES

MAX_ROUNDS = 1000


class StrictIntegerField(serializers.IntegerField):
    """An integer field that refuses strings, floats and booleans instead of converting them."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


@extend_schema_field(
    {"oneOf": [{"type": "integer"}, {"type": "string"}], "description": "variant id or name"}
)
class VariantRefField(serializers.Field):
    """A variant given by id or by name (case-insensitive): the variant, or with ``id_only``
    its id alone (all that reads filtering by variant need, and cheaper to look up)."""

    default_error_messages = {
        "invalid": "Give a variant id or name.",
        "unknown": "No variant {value!r}.",
    }

    def __init__(self, *, id_only: bool = False, **kwargs: Any) -> None:
        self.id_only = id_only
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Variant | int:
        if isinstance(data, bool) or not isinstance(data, int | str) or data == "":
            self.fail("invalid")
        variant = variant_id_by_ref(data) if self.id_only else variant_by_ref(data)
        if variant is None:
            self.fail("unknown", value=data)
        return variant

    def to_representation(self, value: Variant) -> str:
        return value.name


class TournamentInput(serializers.Serializer):
    name = StrictCharField(max_length=100)
    description = StrictCharField(max_length=1000, required=False, allow_blank=True, default="")
    variant = VariantRefField()
    format = serializers.ChoiceField(choices=TournamentFormat.choices, help_text=format_help())
    bots = serializers.ListField(
        child=StrictIntegerField(min_value=1, max_value=MAX_ID),
        min_length=1,
        max_length=MAX_ENTRIES,
    )
    table_size = StrictIntegerField(min_value=3, max_value=8, default=4)
    time_limit_ms = StrictIntegerField(min_value=10, max_value=120_000, default=1000)
    rounds = StrictIntegerField(
        min_value=1, max_value=MAX_ROUNDS, default=1, help_text=rounds_help()
    )
    start_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    seed = StrictIntegerField(
        min_value=0,
        max_value=MAX_ID,
        required=False,
        help_text=(
            "the seed the schedule (tables and seatings) derives from, drawn at random when "
            "left out; the cards are keyed with the tournament's own salt as well, so another "
            "tournament given the same seed never gets the same deals"
        ),
    )


class ProgressOutput(serializers.Serializer):
    total = serializers.IntegerField()
    finished = serializers.IntegerField()
    running = serializers.IntegerField()
    queued = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    done = serializers.IntegerField()
    percent = serializers.FloatField()
    estimated_finish = serializers.DateTimeField(allow_null=True)


class TournamentOutput(serializers.ModelSerializer):
    """A tournament in a list: counts come from the list query's annotations."""

    variant = serializers.CharField(source="variant.name")
    organiser = serializers.CharField(source="organiser.username")
    entries = serializers.IntegerField(source="entry_count")
    matches = serializers.IntegerField(source="match_count")
    matches_done = serializers.IntegerField()
    seed = serializers.SerializerMethodField(
        help_text="the seed fixtures derive from, null until the tournament has ended"
    )
    seed_sha256 = serializers.SerializerMethodField(
        help_text="SHA-256 of the tournament seed's decimal text"
    )

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_seed(self, tournament: Tournament) -> int | None:
        ended = tournament.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)
        return tournament.seed if ended else None

    def get_seed_sha256(self, tournament: Tournament) -> str:
        return seed_sha256(tournament.seed)

    class Meta:
        model = Tournament
        extra_kwargs = {
            "rounds": {"help_text": rounds_help()},
            "format": {"help_text": format_help()},
        }
        fields = [
            "id",
            "name",
            "description",
            "variant",
            "format",
            "status",
            "organiser",
            "table_size",
            "time_limit_ms",
            "rounds",
            "seed",
            "seed_sha256",
            "start_at",
            "started_at",
            "finished_at",
            "created_at",
            "entries",
            "matches",
            "matches_done",
        ]


class EntryOutput(serializers.Serializer):
    id = serializers.IntegerField(source="bot.id")
    name = serializers.CharField(source="bot.name")
    status = serializers.CharField(source="bot.status")


class TournamentDetailOutput(TournamentOutput):
    """A tournament in full: its entered bots and its progress."""

    bots = EntryOutput(source="entries", many=True)
    progress = serializers.SerializerMethodField()

    class Meta(TournamentOutput.Meta):
        fields = [*TournamentOutput.Meta.fields, "bots", "progress"]

    @extend_schema_field(ProgressOutput)
    def get_progress(self, tournament: Tournament) -> dict[str, Any]:
        return self.context["progress"]


class HeadToHeadOutput(serializers.Serializer):
    bot = serializers.IntegerField(help_text="the opponent's id")
    matches = serializers.IntegerField()
    ahead = serializers.IntegerField()
    level = serializers.IntegerField()
    behind = serializers.IntegerField()


class StandingOutput(serializers.Serializer):
    place = serializers.IntegerField()
    bot = serializers.IntegerField()
    bot_name = serializers.CharField()
    matches = serializers.IntegerField()
    total_score = serializers.IntegerField()
    average_score = serializers.FloatField(allow_null=True)
    average_rank = serializers.FloatField(allow_null=True)
    exact_bid_rate = serializers.FloatField(allow_null=True)
    faults = serializers.IntegerField()
    wins = serializers.IntegerField()
    duplicate_score = serializers.FloatField(
        allow_null=True,
        help_text="duplicate format: points minus the mean of the same seat and deal, summed",
    )
    byes = serializers.IntegerField(help_text="Swiss: rounds the bot sat out")
    swiss_points = serializers.FloatField(
        allow_null=True, help_text="Swiss: table size minus rank per match, byes as average"
    )
    head_to_head = serializers.DictField(
        child=HeadToHeadOutput(),
        help_text="opponent's name -> finished matches shared, and in how many this bot scored "
        "more (ahead), the same (level) or less (behind)",
    )


class StandingsOutput(serializers.Serializer):
    ranking_rule = serializers.CharField(help_text="how this format orders its standings")
    standings = StandingOutput(many=True)
    winners = serializers.ListField(child=serializers.IntegerField())
    tie_for_first = serializers.BooleanField()
    final = serializers.BooleanField()


class SeatOutput(serializers.ModelSerializer):
    """A seat in a match list: who sat there and how it went."""

    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")

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
    has_replay = serializers.BooleanField()
    seats = SeatOutput(many=True)
    seed = serializers.SerializerMethodField(
        help_text="the deal's seed, null until the match has ended (then it matches seed_sha256)"
    )
    seed_sha256 = serializers.SerializerMethodField(
        help_text="SHA-256 of the seed's decimal text, published before the match is played"
    )

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_seed(self, match: Match) -> int | None:
        return match.seed if match_seed_revealed(match) else None

    def get_seed_sha256(self, match: Match) -> str:
        return seed_sha256(match.seed)

    class Meta:
        model = Match
        fields = [
            "id",
            "tournament",
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
            "error",
            "rating_sequence",
            "voided_deals",
        ]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_error(self, match: Match) -> str | None:
        request = self.context.get("request")
        return match.error if request is not None and sees_platform_errors(request.user) else None


class LeaderboardQuery(serializers.Serializer):
    variant = VariantRefField(id_only=True)
    include_provisional = serializers.BooleanField(default=True)


# An output whose rows are shaped whole from a selector's plain records: its declared fields
# describe the rows in the API's schema, and none is built or called for every row. (No
# docstring: the schema would take it as the description of every output using it.)
class ShapedWhole:
    @cached_property
    def times(self) -> serializers.DateTimeField:
        """DRF's rendering of a time (ISO 8601, UTC as "Z") in the time zone of this request,
        looked up once for all the rows rather than for every time shown."""
        return serializers.DateTimeField(default_timezone=timezone.get_current_timezone())


class LeaderboardRowOutput(ShapedWhole, serializers.ModelSerializer):
    rank = serializers.IntegerField()
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")
    version = serializers.IntegerField(source="bot.version", help_text="the bot's version")
    owner = serializers.CharField(source="bot.owner.username")
    provisional = serializers.BooleanField(read_only=True)

    class Meta:
        model = Rating
        fields = [
            "rank",
            "bot",
            "bot_name",
            "version",
            "owner",
            "mu",
            "sigma",
            "conservative",
            "matches",
            "provisional",
            "updated_at",
        ]

    def to_representation(self, instance: LeaderboardRow) -> dict[str, Any]:
        """The row as the fields above show it, shaped at once rather than field by field."""
        return {
            "rank": instance.rank,
            "bot": instance.bot_id,
            "bot_name": instance.bot_name,
            "version": instance.version,
            "owner": instance.owner,
            "mu": instance.mu,
            "sigma": instance.sigma,
            "conservative": instance.conservative,
            "matches": instance.matches,
            "provisional": is_provisional(instance.matches),
            "updated_at": self.times.to_representation(instance.updated_at),
        }


class BotRatingsQuery(serializers.Serializer):
    at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class RatingHistoryQuery(BotRatingsQuery):
    variant = VariantRefField(id_only=True, required=False, allow_null=True, default=None)


class BotRatingOutput(ShapedWhole, serializers.Serializer):
    """A bot's rating in one variant: now, or as it stood at the asked time."""

    variant = serializers.CharField()
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    conservative = serializers.FloatField()
    matches = serializers.IntegerField()
    provisional = serializers.BooleanField()
    as_of = serializers.DateTimeField(help_text="when the rating last changed")
    match = serializers.IntegerField(
        allow_null=True, help_text="the match of the last update (with ?at= only)"
    )

    def to_representation(self, instance: BotRating) -> dict[str, Any]:
        """The rating as the fields above show it, shaped at once rather than field by field."""
        return {
            "variant": instance.variant_name,
            "mu": instance.mu,
            "sigma": instance.sigma,
            "conservative": instance.conservative,
            "matches": instance.matches,
            "provisional": is_provisional(instance.matches),
            "as_of": self.times.to_representation(instance.as_of),
            "match": instance.match_id,
        }


class RatingHistoryOutput(ShapedWhole, serializers.ModelSerializer):
    variant = serializers.CharField(source="variant.name")
    match = serializers.IntegerField(
        source="match_id", allow_null=True, help_text="empty on a row marking a new bot version"
    )
    version = serializers.IntegerField(
        allow_null=True, help_text="the bot's new version, on a row that marks one"
    )

    class Meta:
        model = RatingHistory
        fields = [
            "match",
            "version",
            "variant",
            "sequence",
            "at",
            "mu_before",
            "sigma_before",
            "mu_after",
            "sigma_after",
        ]

    def to_representation(self, instance: HistoryRow) -> dict[str, Any]:
        """The update as the fields above show it, shaped at once rather than field by field."""
        return {
            "match": instance.match_id,
            "version": instance.version,
            "variant": instance.variant_name,
            "sequence": instance.sequence,
            "at": self.times.to_representation(instance.at),
            "mu_before": instance.mu_before,
            "sigma_before": instance.sigma_before,
            "mu_after": instance.mu_after,
            "sigma_after": instance.sigma_after,
        }


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
