"""Reading matches: lists and details with their seats, in a fixed number of queries."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from tournaments.models import Match, MatchSeat, Replay, Tournament


def _with_has_replay(matches: QuerySet[Match]) -> QuerySet[Match]:
    # An EXISTS, not a join: the replay's JSON can be large and is never needed in a list.
    return matches.annotate(has_replay=Exists(Replay.objects.filter(match=OuterRef("pk"))))


def match_list(*, tournament: Tournament | None = None) -> QuerySet[Match]:
    """Matches newest first, with variant, tournament and seated bots loaded up front."""
    seats = MatchSeat.objects.select_related("bot").order_by("seat")
    matches = Match.objects.select_related("variant", "tournament").prefetch_related(
        Prefetch("seats", queryset=seats)
    )
    if tournament is not None:
        matches = matches.filter(tournament=tournament)
    return _with_has_replay(matches).order_by("-created_at", "-pk")


def tournament_fixtures(*, tournament: Tournament) -> QuerySet[Match]:
    """A tournament's matches in playing order: by round, then as they were generated."""
    return match_list(tournament=tournament).order_by("round", "pk")


def match_detail_list() -> QuerySet[Match]:
    """Matches with each seat's bot and fault records, for showing one match in full."""
    seats = (
        MatchSeat.objects.select_related("bot").prefetch_related("fault_records").order_by("seat")
    )
    matches = Match.objects.select_related("variant", "tournament").prefetch_related(
        Prefetch("seats", queryset=seats)
    )
    return _with_has_replay(matches)


def match_replay(*, match: Match) -> Replay | None:
    """The match's stored replay, or None while it has none."""
    return Replay.objects.filter(match=match).first()
