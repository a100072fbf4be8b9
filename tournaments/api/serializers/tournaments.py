"""Tournaments: organising one, how it reads with its entries and progress, and its standings."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from engine.seeds import seed_sha256
from tournaments.api.serializers.fields import (
    TIME_BANK_HELP,
    StrictCharField,
    StrictIntegerField,
    VariantRefField,
    time_bank_field,
)
from tournaments.models import Tournament, TournamentFormat, TournamentStatus
from tournaments.models.competitions import format_help, rounds_help
from tournaments.selectors.variants import MAX_ID
from tournaments.services.tournaments import MAX_ENTRIES

MAX_ROUNDS = 1000
RATED_HELP = (
    "whether the matches change the variant's public ratings (ladder matches always do); "
    "the tournament's own standings count every match either way"
)


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
    time_bank_ms = time_bank_field()
    rounds = StrictIntegerField(
        min_value=1, max_value=MAX_ROUNDS, default=1, help_text=rounds_help()
    )
    start_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    rated = serializers.BooleanField(
        default=False,
        help_text=RATED_HELP + "; only staff may set it true (403 for anyone else)",
    )
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
    to_make = serializers.IntegerField(
        help_text="matches not made yet while the tournament starts (counted in total)"
    )
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
            "rated": {"help_text": RATED_HELP},
            "time_bank_ms": {"help_text": TIME_BANK_HELP},
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
            "time_bank_ms",
            "rounds",
            "rated",
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
    shared_owner_tables = serializers.IntegerField(
        help_text="finished tables at which this bot sat with another bot of its owner"
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
    shared_owner_tables = serializers.IntegerField(
        help_text="finished tables that seated two or more bots of one owner"
    )
