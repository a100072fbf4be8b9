"""Reading matches: lists and details with their seats, in a fixed number of queries."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from tournaments.models import (
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    Tournament,
    sees_bot_privately,
)

# A match's deal is over once it was played or will never be; a failed match may be retried.
DEALT_OUT = (MatchStatus.FINISHED, MatchStatus.CANCELLED)


def public(path: str = "") -> Q:
    """The matches anyone may see: all but scrimmages' (an owner's unrated practice, shown to
    that owner and staff only). ``path`` leads from the rows filtered to their match (empty:
    they are matches). Every public list, count and statistic of matches filters with it."""
    return Q(**{f"{path}scrimmage__isnull": True})


def ladder_in_play(path: str = "") -> Q:
    """Ladder matches not yet over (queued, running, or failed and open to a late outcome).

    Who sits at them is shown only to each seat's owner (their own seat) and to staff: the
    public pages list them once they are over, and the API blanks the other seats' bots
    (``seat_hidden``), so a bot learns nothing of its table-mates from the ``match_id`` it is
    sent, and a pair cannot find each other's tables while they play. ``path`` as for
    ``public``."""
    return Q(**{f"{path}ladder__isnull": False}) & ~Q(**{f"{path}status__in": DEALT_OUT})


def seat_hidden(*, match: Match, owner_id: int, user: User | AnonymousUser) -> bool:
    """Whether ``user`` may not see which bot sits at a seat of ``match`` whose bot belongs to
    ``owner_id``: a ladder match in play (``ladder_in_play``), unless it is the user's own bot
    or the user is staff."""
    if match.ladder_id is None or match.status in DEALT_OUT:
        return False
    return not sees_bot_privately(user, owner_id)


def matches_visible_to(user: User | AnonymousUser) -> Q:
    """The matches ``user`` may open: the public ones, their own scrimmages' too, and every
    match for staff."""
    if isinstance(user, AnonymousUser):
        return public()
    if user.is_staff:
        return Q()
    return public() | Q(scrimmage__owner_id=user.pk)


def _group_still_playing(match: str = "") -> Exists:
    """Another rotation of the match's duplicate group (same deal) is still to be played;
    ``match`` is the path to the match from the rows annotated (empty: they are matches)."""
    return Exists(
        Match.objects.filter(duplicate_group=OuterRef(f"{match}duplicate_group"))
        .exclude(duplicate_group="")
        .exclude(status__in=DEALT_OUT)
    )


def _with_has_replay(matches: QuerySet[Match]) -> QuerySet[Match]:
    # An EXISTS, not a join: the replay's JSON can be large and is never needed in a list.
    return matches.annotate(
        has_replay=Exists(Replay.objects.filter(match=OuterRef("pk"))),
        group_still_playing=_group_still_playing(),
    )


def match_seed_revealed(match: Match) -> bool:
    """Tell whether the match's seed, and each of its voided deals' seeds, may be shown: it has
    ended (finished or cancelled) and no other match dealt the same cards (its duplicate group)
    is still to be played. Before that only their commitments ``seed_sha256`` are shown
    (tournaments/seeds.py): an attempt of a voided deal may still be playing on, and a failed
    match still takes a late outcome."""
    if match.status not in DEALT_OUT:
        return False
    still_playing = getattr(match, "group_still_playing", None)
    if still_playing is None:
        still_playing = (
            Match.objects.filter(pk=match.pk)
            .annotate(g=_group_still_playing())
            .values_list("g", flat=True)[0]
        )
    return seed_revealed(status=match.status, group_still_playing=still_playing)


def seed_revealed(*, status: str, group_still_playing: bool) -> bool:
    """The rule of ``match_seed_revealed`` for a match read as plain values."""
    return status in DEALT_OUT and not group_still_playing


def match_list(*, tournament: Tournament | None = None) -> QuerySet[Match]:
    """Public matches newest first, with variant, tournament and seated bots loaded up front."""
    seats = MatchSeat.objects.select_related("bot").order_by("seat")
    matches = (
        Match.objects.filter(public())
        .select_related("variant", "tournament")
        .prefetch_related(Prefetch("seats", queryset=seats))
    )
    if tournament is not None:
        matches = matches.filter(tournament=tournament)
    return _with_has_replay(matches).order_by("-created_at", "-pk")


def scrimmage_match_list(*, scrimmage_id: int) -> QuerySet[Match]:
    """A scrimmage's matches in playing order, with seated bots loaded up front; for its owner
    and staff (tournaments/selectors/scrimmages.py)."""
    seats = MatchSeat.objects.select_related("bot").order_by("seat")
    matches = (
        Match.objects.filter(scrimmage_id=scrimmage_id)
        .select_related("variant", "tournament")
        .prefetch_related(Prefetch("seats", queryset=seats))
    )
    return _with_has_replay(matches).order_by("round", "pk")


def tournament_fixtures(*, tournament: Tournament) -> QuerySet[Match]:
    """A tournament's matches in playing order: by round, then as they were generated."""
    return match_list(tournament=tournament).order_by("round", "pk")


# A seat row of a tournament's download: the seat's fields, then its match's (``match__``).
FIXTURE_SEAT_FIELDS = (
    "match_id",
    "match__tournament_id",
    "match__ladder_id",
    "match__scrimmage_id",
    "match__variant__name",
    "match__round",
    "match__duplicate_group",
    "match__seed",
    "match__status",
    "match__attempts",
    "match__max_attempts",
    "match__rating_sequence",
    "match__started_at",
    "match__finished_at",
    "match__created_at",
    "has_replay",
    "group_still_playing",
    "seat",
    "bot_id",
    "bot__name",
    "score",
    "rank",
    "faults",
    "disqualified",
)


def tournament_fixture_seats(*, tournament: Tournament) -> QuerySet[MatchSeat, Any]:
    """Every seat of the tournament's matches, in the fixtures' order (round, match, seat), as
    named rows of ``FIXTURE_SEAT_FIELDS``: one query and no model objects, for a download of
    any size read with ``.iterator()``."""
    return (
        MatchSeat.objects.filter(match__tournament=tournament)
        .annotate(
            has_replay=Exists(Replay.objects.filter(match=OuterRef("match_id"))),
            group_still_playing=_group_still_playing("match__"),
        )
        .order_by("match__round", "match_id", "seat")
        .values_list(*FIXTURE_SEAT_FIELDS, named=True)
    )


def match_detail_list() -> QuerySet[Match]:
    """Matches with each seat's bot and fault records, and their voided deals, for showing one
    match in full."""
    seats = (
        MatchSeat.objects.select_related("bot").prefetch_related("fault_records").order_by("seat")
    )
    matches = Match.objects.select_related("variant", "tournament").prefetch_related(
        Prefetch("seats", queryset=seats), "voided_deals"
    )
    return _with_has_replay(matches)


def match_replay_id(*, match: Match) -> int | None:
    """The id of the match's stored replay (read it by id only when it is needed: it can be
    large), or None while it has none or its seed is not yet revealed."""
    if not match_seed_revealed(match):
        return None
    return Replay.objects.filter(match=match).values_list("pk", flat=True).first()
