"""Reads about tournaments: progress with an estimated finish, standings, head-to-head."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

from django.db.models import (
    Count,
    F,
    IntegerField,
    Max,
    Min,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from tournaments import formats
from tournaments.formats import DuplicateResult, duplicate_differences
from tournaments.models import (
    Match,
    MatchSeat,
    MatchStatus,
    Tournament,
    TournamentEntry,
    TournamentFormat,
    TournamentStatus,
)
from tournaments.models.competitions import RANKING_RULE

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class TournamentCounts(TypedDict):
    """The counts ``tournament_list`` adds to each tournament."""

    entry_count: int
    match_count: int
    matches_done: int


# A tournament as tournament_list returns it, with its counts.
CountedTournament: TypeAlias = "WithAnnotations[Tournament, TournamentCounts]"


def _count_of(model, **filters) -> Coalesce:
    """A subquery counting the tournament's related rows: no join, so no row explosion."""
    rows = (
        model.objects.filter(tournament=OuterRef("pk"), **filters)
        .order_by()
        .values("tournament")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), Value(0))


def tournament_list() -> QuerySet[CountedTournament]:
    """Tournaments with variant, organiser and entry and match counts, for lists of any size."""
    return Tournament.objects.select_related("variant", "organiser").annotate(
        entry_count=_count_of(TournamentEntry),
        match_count=_count_of(Match),
        matches_done=_count_of(
            Match,
            status__in=[MatchStatus.FINISHED, MatchStatus.FAILED, MatchStatus.CANCELLED],
        ),
    )


def tournament_detail_list() -> QuerySet[Tournament]:
    """Tournaments with their entered bots loaded, for showing one in full."""
    entries = TournamentEntry.objects.select_related("bot").order_by("bot__name")
    return tournament_list().prefetch_related(Prefetch("entries", queryset=entries))


@dataclass
class Progress:
    """How far a tournament has got."""

    total: int
    finished: int
    running: int
    queued: int
    failed: int
    cancelled: int
    estimated_finish: datetime | None
    # Matches still to be made while the tournament starts (its first ones may be playing).
    to_make: int = 0

    @property
    def done(self) -> int:
        """Matches that will not change any more."""
        return self.finished + self.failed + self.cancelled

    @property
    def percent(self) -> float:
        """Share of matches done, 0..100."""
        return 100.0 * self.done / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the API form."""
        return {
            "total": self.total,
            "finished": self.finished,
            "running": self.running,
            "queued": self.queued,
            "failed": self.failed,
            "cancelled": self.cancelled,
            "to_make": self.to_make,
            "done": self.done,
            "percent": round(self.percent, 1),
            "estimated_finish": self.estimated_finish,
        }


def planned_matches(*, tournament: Tournament, bots: int) -> int | None:
    """How many matches the tournament's format schedules for ``bots`` entries, counted without
    making them (Swiss: every round; ladders: None, they go on as bots come free).

    Raises ``formats.FixtureError`` when the entries cannot fill its tables."""
    size, rounds = tournament.table_size, tournament.rounds
    if tournament.format == TournamentFormat.ROUND_ROBIN:
        return formats.round_robin_count(bots, size, rounds)
    if tournament.format == TournamentFormat.DUPLICATE:
        return formats.duplicate_count(bots, size, rounds)
    if tournament.format == TournamentFormat.SWISS:
        return formats.swiss_count(bots, size, rounds)
    return None


def _to_make(tournament: Tournament, made: int) -> int:
    """Matches of a starting round robin or duplicate tournament not made yet."""
    fixed = (TournamentFormat.ROUND_ROBIN, TournamentFormat.DUPLICATE)
    if tournament.status != TournamentStatus.STARTING or tournament.format not in fixed:
        return 0
    planned = planned_matches(tournament=tournament, bots=tournament.entries.count())
    return max(0, (planned or 0) - made)


def tournament_progress(*, tournament: Tournament) -> Progress:
    """Count matches by state and estimate the finish from the pace so far; while a tournament
    starts, the matches not made yet count in its total and in what remains."""
    counts = tournament.matches.aggregate(
        total=Count("pk"),
        finished=Count("pk", filter=Q(status=MatchStatus.FINISHED)),
        running=Count("pk", filter=Q(status=MatchStatus.RUNNING)),
        queued=Count("pk", filter=Q(status=MatchStatus.QUEUED)),
        failed=Count("pk", filter=Q(status=MatchStatus.FAILED)),
        cancelled=Count("pk", filter=Q(status=MatchStatus.CANCELLED)),
        first=Min("started_at"),
        last=Max("finished_at"),
    )
    first, last = counts.pop("first"), counts.pop("last")
    to_make = _to_make(tournament, counts["total"])
    counts["total"] += to_make
    progress = Progress(**counts, estimated_finish=None, to_make=to_make)
    remaining = progress.queued + progress.running + to_make
    if remaining and progress.finished and first and last and last > first:
        pace = (last - first) / progress.finished
        progress.estimated_finish = timezone.now() + pace * remaining
    return progress


@dataclass
class Standing:
    """One bot's line in a tournament's standings."""

    bot_id: int
    bot_name: str
    matches: int = 0
    total_score: int = 0
    rank_sum: int = 0
    bids_exact: int = 0
    bids_total: int = 0
    faults: int = 0
    wins: int = 0
    duplicate_score: float | None = None
    byes: int = 0
    swiss_points: float | None = None
    place: int = 0
    shared_owner_tables: int = 0
    head_to_head: dict[int, list[int]] = field(default_factory=dict)

    def to_dict(self, names: dict[int, str]) -> dict[str, Any]:
        """Return the API form; head_to_head is keyed by the opponent's name (from ``names``)."""
        n = self.matches
        return {
            "place": self.place,
            "bot": self.bot_id,
            "bot_name": self.bot_name,
            "matches": n,
            "total_score": self.total_score,
            "average_score": round(self.total_score / n, 2) if n else None,
            "average_rank": round(self.rank_sum / n, 3) if n else None,
            "exact_bid_rate": round(self.bids_exact / self.bids_total, 4)
            if self.bids_total
            else None,
            "faults": self.faults,
            "wins": self.wins,
            "duplicate_score": None
            if self.duplicate_score is None
            else round(self.duplicate_score, 2),
            "byes": self.byes,
            "swiss_points": self.swiss_points,
            "shared_owner_tables": self.shared_owner_tables,
            "head_to_head": {
                names[other]: {
                    "bot": other,
                    "matches": ahead + level + behind,
                    "ahead": ahead,
                    "level": level,
                    "behind": behind,
                }
                for other, (ahead, level, behind) in sorted(
                    self.head_to_head.items(), key=lambda item: names[item[0]]
                )
            },
        }


def _finished_seats(tournament: Tournament) -> dict[int, list[MatchSeat]]:
    tables: dict[int, list[MatchSeat]] = defaultdict(list)
    seats = (
        MatchSeat.objects.filter(match__tournament=tournament, match__status=MatchStatus.FINISHED)
        .select_related("bot")
        .only(
            "match_id",
            "seat",
            "bot__name",
            "bot__owner",
            "score",
            "rank",
            "bids_exact",
            "bids_total",
            "faults",
            "disqualified",
        )
    )
    for seat in seats:
        tables[seat.match_id].append(seat)
    return tables


def tournament_standings(*, tournament: Tournament) -> dict[str, Any]:
    """Standings by total score (duplicate: by duplicate score), with winner and ties."""
    tables = _finished_seats(tournament)
    lines: dict[int, Standing] = {}
    shared_tables = 0
    for seats in tables.values():
        owners = Counter(seat.bot.owner_id for seat in seats)
        shared_tables += any(n > 1 for n in owners.values())
        for seat in seats:
            line = lines.setdefault(seat.bot_id, Standing(seat.bot_id, seat.bot.name))
            line.matches += 1
            line.shared_owner_tables += owners[seat.bot.owner_id] > 1
            line.total_score += seat.score or 0
            line.rank_sum += seat.rank or 0
            line.bids_exact += seat.bids_exact
            line.bids_total += seat.bids_total
            line.faults += seat.faults
            line.wins += seat.rank == 1
            for other in seats:
                if other.bot_id != seat.bot_id:
                    h2h = line.head_to_head.setdefault(other.bot_id, [0, 0, 0])
                    h2h[_compare(seat.score, other.score)] += 1
    if tournament.format == TournamentFormat.DUPLICATE:
        _add_duplicate_scores(tournament, lines, tables)
    if tournament.format == TournamentFormat.SWISS:
        _add_swiss_points(tournament, lines)
    key = _sort_key(tournament)
    ordered = sorted(lines.values(), key=lambda s: (key(s), s.bot_name))
    for line in ordered:
        line.place = 1 + sum(1 for other in ordered if key(other) < key(line))
    leaders = [line for line in ordered if line.place == 1]
    names = {line.bot_id: line.bot_name for line in ordered}
    return {
        "ranking_rule": RANKING_RULE[tournament.format],
        "standings": [line.to_dict(names) for line in ordered],
        "winners": [line.bot_id for line in leaders] if ordered else [],
        "tie_for_first": len(leaders) > 1,
        "final": tournament.status == TournamentStatus.FINISHED,
        "shared_owner_tables": shared_tables,
    }


def shared_owner_matches(*, tournament: Tournament) -> set[int]:
    """The tournament's matches, in any state, at which two seats belong to one owner.

    Owners are public, so anyone may see which tables seated bots of one owner together.
    """
    return set(
        MatchSeat.objects.filter(match__tournament=tournament)
        .values("match_id", "bot__owner_id")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .values_list("match_id", flat=True)
    )


def _sort_key(tournament: Tournament):
    """The order of ``RANKING_RULE`` for the tournament's format."""
    if tournament.format == TournamentFormat.DUPLICATE:
        return lambda s: -(s.duplicate_score or 0.0)
    if tournament.format == TournamentFormat.SWISS:
        return lambda s: (-(s.swiss_points or 0.0), -s.total_score)
    return lambda s: -s.total_score


def _add_swiss_points(tournament: Tournament, lines: dict[int, Standing]) -> None:
    """Swiss points and byes on every entered bot's line, including bots yet to finish a match."""
    names = dict(tournament.entries.values_list("bot_id", "bot__name"))
    byes = swiss_byes(tournament=tournament)
    for bot_id, points in swiss_points(tournament=tournament).items():
        line = lines.setdefault(bot_id, Standing(bot_id, names.get(bot_id, "")))
        line.swiss_points = points
        line.byes = byes.get(bot_id, 0)


def _compare(mine: int | None, theirs: int | None) -> int:
    mine, theirs = mine or 0, theirs or 0
    return 0 if mine > theirs else 1 if mine == theirs else 2


def _add_duplicate_scores(
    tournament: Tournament, lines: dict[int, Standing], tables: dict[int, list[MatchSeat]]
) -> None:
    """Compare results deal by deal within each duplicate group (the luck of the cards cancels)."""
    results = []
    matches = (
        Match.objects.filter(
            tournament=tournament, status=MatchStatus.FINISHED, replay__isnull=False
        )
        .exclude(duplicate_group="")
        .select_related("replay")
    )
    for match in matches:
        deals = match.replay.data["deals"]
        players = match.replay.data["players"]
        scores = [[d["scores"][s] for d in deals if d.get("scores")] for s in range(players)]
        seats = tuple(s.bot_id for s in sorted(tables[match.pk], key=lambda s: s.seat))
        results.append(DuplicateResult(match.duplicate_group, seats, scores))
    for bot_id, diff in duplicate_differences(results).items():
        if bot_id in lines:
            lines[bot_id].duplicate_score = diff


def swiss_byes(*, tournament: Tournament) -> dict[int, int]:
    """How many of the rounds made so far each entered bot sat out."""
    entered = set(tournament.entries.values_list("bot_id", flat=True))
    seated: dict[int, set[int]] = defaultdict(set)
    for round_, bot_id in MatchSeat.objects.filter(match__tournament=tournament).values_list(
        "match__round", "bot_id"
    ):
        seated[round_].add(bot_id)
    byes = dict.fromkeys(entered, 0)
    for bots in seated.values():
        for bot_id in entered - bots:
            byes[bot_id] += 1
    return byes


def swiss_points(*, tournament: Tournament) -> dict[int, float]:
    """Swiss standing points per entered bot (``RANKING_RULE``): table size minus rank per
    finished match, summed (ties share), plus an average result, (size - 1) / 2, per bye."""
    size = tournament.table_size
    bye_points = (size - 1) / 2
    points = {bot: bye_points * n for bot, n in swiss_byes(tournament=tournament).items()}
    rows = (
        MatchSeat.objects.filter(match__tournament=tournament, match__status=MatchStatus.FINISHED)
        .values("bot_id")
        .annotate(p=Sum(size - F("rank")))
    )
    for row in rows:
        points[row["bot_id"]] = points.get(row["bot_id"], 0.0) + float(row["p"] or 0)
    return points
