"""Apply TrueSkill updates exactly once, in a fixed order (a recompute replays them: recompute.py).

Every application runs under one lock (a PostgreSQL advisory lock; SQLite serialises writers
anyway) and in one transaction with the match's ``rated`` flag, so a match is rated once even
with many workers finishing at the same moment, and a worker dying mid-update leaves nothing
half-applied. Each rated match takes the next ``rating_sequence``; a recompute replays the
matches in that order and so reproduces the numbers exactly (tournaments/services/recompute.py).

The rotations of a duplicate group (the same deals with the bots moved round the seats) are
rated as ONE update once all of them have ended, ranked by the deal-by-deal comparison that
cancels the luck of the cards and orders a field better than rating the same number of
matches one by one or summed (bench/README.md). Their history rows hang on the group's first
match. The tables of a ladder round (tournaments/services/ladders.py, ``round_keys``) are
likewise rated as ONE update once all of them have ended: every bot of the round ranked by its
points, which ordered realistic fields sooner than rating each table alone (bench/README.md,
"Realistic fields"). Each bot's history row hangs on its own table.

Only ladder matches and the matches of tournaments staff marked ``rated`` change the public
ratings; any organiser can run a tournament, and could otherwise feed their own bot weak
opponents. The others are marked handled (``rated``) with no sequence and change nothing, so a
recompute, which replays the sequence, agrees with the live numbers. Their tournament's
standings still count them (tournaments/selectors/tournaments.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Exists, Max, OuterRef, Q, QuerySet
from django.utils import timezone

from engine.scoring import rating_ranks
from tournaments.cache_keys import history_generation_key, leaderboard_generation_key
from tournaments.formats import DuplicateResult, duplicate_differences
from tournaments.maths.intervals import Finish
from tournaments.maths.ratings import RatingParams, new_version_sigma, rate
from tournaments.models import (
    BotVersion,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingHistory,
    Replay,
    Tournament,
    Variant,
)
from tournaments.services.analytics import forget_bot_analytics
from tournaments.services.rows import CHUNK, update_rows
from tournaments.services.shares import RatedBot, shares_reweigh

logger = logging.getLogger(__name__)
RATING_LOCK_KEY = 7_042_017  # any constant shared by every process of this deployment


def lock_ratings() -> None:
    """Serialise rating writers for the rest of the transaction."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [RATING_LOCK_KEY])


@dataclass(slots=True)
class _Value:
    """A rating being updated in memory."""

    mu: float
    sigma: float
    matches: int


@dataclass
class RatingState:
    """Ratings being updated in memory, by (bot, variant), and each variant's parameters."""

    values: dict[tuple[int, int], _Value]
    params: dict[int, RatingParams]

    def params_for(self, variant_id: int, raw: dict | None) -> RatingParams:
        if variant_id not in self.params:
            self.params[variant_id] = RatingParams.from_dict(raw)
        return self.params[variant_id]

    def get(self, bot_id: int, variant_id: int, params: RatingParams) -> _Value:
        key = (bot_id, variant_id)
        if key not in self.values:
            self.values[key] = _Value(params.mu, params.sigma, 0)
        return self.values[key]


class HistoryRow(NamedTuple):
    """One RatingHistory row, in the column order COPY writes."""

    bot_id: int
    variant_id: int
    match_id: int | None
    sequence: int
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    at: datetime
    version: int | None = None  # set (and match_id None) on a row marking a new bot version


HISTORY_COLUMNS = HistoryRow._fields


class SeatRow(NamedTuple):
    """One seat of a played match."""

    seat: int
    bot_id: int
    score: int | None
    disqualified: bool
    # Refused every request of the match, within its grace (MatchSeat.refused_every_request
    # and not refusal_counted): left out of it. A counted refusal is a disqualified seat.
    refused: bool = False


class UnitKind(StrEnum):
    """What one rating update rates."""

    MATCH = "match"  # one table, ranked by points
    ROTATIONS = "rotations"  # a duplicate group, ranked by the deal-by-deal comparison
    ROUND = "round"  # a ladder round's tables, every bot ranked by its points


@dataclass(frozen=True)
class Unit:
    """One rating update: a single match, the rotations of a duplicate group, or the tables of a
    ladder round, rated together.

    ``members`` are match ids in rating order; ``finished_at`` is when the last of them ended;
    ``group`` is the ``rating_group`` the members share ("" for a single match).
    """

    members: list[int]
    variant_id: int
    finished_at: datetime
    group: str
    kind: UnitKind

    @classmethod
    def of(
        cls, members: list[int], variant_id: int, finished_at: datetime, group: str, rotations: bool
    ) -> Unit:
        """A unit of ``members``: one match, or a group of duplicate rotations or round tables."""
        if len(members) == 1:
            kind = UnitKind.MATCH
        else:
            kind = UnitKind.ROTATIONS if rotations else UnitKind.ROUND
        return cls(members, variant_id, finished_at, group, kind)


class Standing(NamedTuple):
    """The bots of one update with the ranks TrueSkill takes (1 best)."""

    bots: list[int]
    ranks: list[int]


def match_standing(seats: list[SeatRow]) -> Standing:
    """One match's bots in seat order with their places: by total, equal totals sharing one,
    disqualified seats sharing last (the batch fit reads them too: services/rank_intervals.py);
    a seat that refused every request is left out, the others ranked among themselves."""
    seats = sorted(s for s in seats if not s.refused)
    ranks = rating_ranks([s.score or 0 for s in seats], [s.disqualified for s in seats])
    return Standing([s.bot_id for s in seats], ranks)


def _group_standing(members: list[int], seats: dict[int, list[SeatRow]]) -> Standing:
    """A duplicate group ranked deal by deal; a bot that any rotation dropped ranks last, one
    that refused every request of any rotation is left out."""
    replays = dict(Replay.objects.filter(match_id__in=members).values_list("match_id", "data"))
    results: list[DuplicateResult] = []
    dropped: set[int] = set()
    refused: set[int] = set()
    for match_id in members:
        table = sorted(seats[match_id])
        deals = replays[match_id]["deals"]
        scores = [[d["scores"][s] for d in deals if d.get("scores")] for s in range(len(table))]
        results.append(DuplicateResult("group", tuple(s.bot_id for s in table), scores))
        dropped.update(s.bot_id for s in table if s.disqualified)
        refused.update(s.bot_id for s in table if s.refused)
    differences = duplicate_differences(results)
    bots = sorted(set(differences) - refused)
    totals = [round(differences[b], 6) for b in bots]
    # The ranking compares the totals only, so fractional differences rank like points.
    ranks = rating_ranks(totals, [b in dropped for b in bots])  # type: ignore[arg-type]
    return Standing(bots, ranks)


def rate_unit(
    state: RatingState,
    params: RatingParams,
    unit: Unit,
    seats: dict[int, list[SeatRow]],
    sequence: int,
    at: datetime,
) -> list[HistoryRow]:
    """Update ``state`` with one unit; return its history rows (on the unit's first match, or
    for a round on each bot's own table).

    A unit left with fewer than two bots (the others refused every request) changes nothing.
    """
    table = dict.fromkeys((s.bot_id for m in unit.members for s in seats[m]), unit.members[0])
    if unit.kind is UnitKind.ROTATIONS:
        standing = _group_standing(unit.members, seats)
    elif unit.kind is UnitKind.ROUND:
        table = {s.bot_id: m for m in unit.members for s in seats[m]}
        standing = match_standing([s for m in unit.members for s in seats[m]])
    else:
        standing = match_standing(seats[unit.members[0]])
    if len(standing.bots) < 2:
        return []
    current = [state.get(bot, unit.variant_id, params) for bot in standing.bots]
    after = rate(params, [(c.mu, c.sigma) for c in current], standing.ranks)
    rows = []
    for bot, value, (mu, sigma) in zip(standing.bots, current, after, strict=True):
        rows.append(
            HistoryRow(
                bot_id=bot,
                variant_id=unit.variant_id,
                match_id=table[bot],
                sequence=sequence,
                mu_before=value.mu,
                sigma_before=value.sigma,
                mu_after=mu,
                sigma_after=sigma,
                at=at,
            )
        )
        value.mu, value.sigma, value.matches = mu, sigma, value.matches + 1
    return rows


def effective_at(when: datetime, previous: datetime | None) -> datetime:
    """When an update counts: its last match's end, but never before the update rated before it.

    So history times never decrease along the sequence, and the ratings on a date are exactly
    the updates up to some point of the sequence: never a group before its last rotation ended.
    """
    return when if previous is None else max(when, previous)


def rate_version(
    state: RatingState, version: BotVersion, sequence: int, at: datetime
) -> list[HistoryRow]:
    """Raise the sigma of every rating the bot has (mu kept); one marking row per variant."""
    rows = []
    for (bot_id, variant_id), value in sorted(state.values.items()):
        if bot_id != version.bot_id:
            continue
        sigma = new_version_sigma(value.sigma, version.sigma_floor)
        rows.append(
            HistoryRow(
                bot_id=bot_id,
                variant_id=variant_id,
                match_id=None,
                sequence=sequence,
                mu_before=value.mu,
                sigma_before=value.sigma,
                mu_after=value.mu,
                sigma_after=sigma,
                at=at,
                version=version.version,
            )
        )
        value.sigma = sigma
    return rows


def save_history(rows: list[HistoryRow]) -> None:
    """Insert history rows: COPY on PostgreSQL (no model objects), bulk_create elsewhere."""
    if connection.vendor != "postgresql":
        RatingHistory.objects.bulk_create(
            [RatingHistory(**row._asdict()) for row in rows], batch_size=CHUNK
        )
        return
    sql = f"COPY {RatingHistory._meta.db_table} ({', '.join(HISTORY_COLUMNS)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.connection.cursor() as raw, raw.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)


def _load_state(pairs: Iterable[tuple[int, int]], every_variant_of: set[int]) -> RatingState:
    """The ratings of ``pairs`` (bot, variant), and of every variant of ``every_variant_of``."""
    state = RatingState(values={}, params={})
    pairs = set(pairs)
    bot_ids = {b for b, _ in pairs} | every_variant_of
    for r in Rating.objects.filter(bot_id__in=bot_ids).only(
        "bot", "variant", "mu", "sigma", "matches"
    ):
        if (r.bot_id, r.variant_id) in pairs or r.bot_id in every_variant_of:
            state.values[(r.bot_id, r.variant_id)] = _Value(r.mu, r.sigma, r.matches)
    return state


def save_state(state: RatingState) -> None:
    """Write the in-memory ratings back (insert new pairs, update existing ones)."""
    existing = {
        (r.bot_id, r.variant_id): r
        for r in Rating.objects.filter(bot_id__in={b for b, _ in state.values})
    }
    now = timezone.now()
    new, changed = [], []
    for (bot_id, variant_id), value in state.values.items():
        row = existing.get((bot_id, variant_id))
        if row is None:
            new.append(
                Rating(
                    bot_id=bot_id,
                    variant_id=variant_id,
                    mu=value.mu,
                    sigma=value.sigma,
                    matches=value.matches,
                )
            )
        else:
            row.mu, row.sigma, row.matches, row.updated_at = (
                value.mu,
                value.sigma,
                value.matches,
                now,
            )
            changed.append(row)
    Rating.objects.bulk_create(new, batch_size=CHUNK)
    update_rows(Rating, changed, ["mu", "sigma", "matches", "updated_at"])
    shares_reweigh(
        RatedBot(bot_id, variant_id, value.sigma, value.matches)
        for (bot_id, variant_id), value in state.values.items()
    )


def seats_by_match(match_ids: list[int]) -> dict[int, list[SeatRow]]:
    seats: dict[int, list[SeatRow]] = {m: [] for m in match_ids}
    rows = MatchSeat.objects.filter(match_id__in=match_ids).values_list(
        "match_id",
        "seat",
        "bot_id",
        "score",
        "disqualified",
        "refused_every_request",
        "refusal_counted",
    )
    for match_id, seat, bot_id, score, disqualified, refused, counted in rows:
        row = SeatRow(seat, bot_id, score, disqualified or counted, refused and not counted)
        seats[match_id].append(row)
    return seats


def _next_sequence() -> int:
    """The number the next update takes: matches and bot versions share one sequence."""
    top = Match.objects.aggregate(top=Max("rating_sequence"))["top"] or 0
    versions = BotVersion.objects.aggregate(top=Max("rating_sequence"))["top"] or 0
    return max(top, versions) + 1


def forget_leaderboards(variant_ids: set[int]) -> None:
    """Once committed, drop the cached generations of these variants' leaderboards, so the
    next request reads the new ratings (every process, where the cache is shared)."""
    refs = Variant.objects.filter(pk__in=variant_ids).values_list("pk", "name")
    keys = [leaderboard_generation_key(str(ref)) for pair in refs for ref in pair]

    def forget() -> None:
        try:
            cache.delete_many(keys)
        except Exception:  # any backend's failure: the generations expire by themselves
            logger.warning("cache unavailable: leaderboard generations left to expire")

    transaction.on_commit(forget)


def forget_histories(bot_ids: set[int]) -> None:
    """Once committed, drop the cached generations of these bots' rating histories, so the
    next request reads the new rows (every process, where the cache is shared)."""
    keys = [history_generation_key(bot_id) for bot_id in bot_ids]

    def forget() -> None:
        try:
            cache.delete_many(keys)
        except Exception:  # any backend's failure: the generations expire by themselves
            logger.warning("cache unavailable: rating history generations left to expire")

    if keys:
        transaction.on_commit(forget)


def ended_at(match: Match) -> datetime:
    """When a finished match ended (the model's constraints give every finished match one)."""
    if match.finished_at is None:
        raise ValueError(f"match {match.pk} has no end time")
    return match.finished_at


def sequence_of(version: BotVersion) -> int:
    """The place of a version already applied in the rating sequence."""
    if version.rating_sequence is None:
        raise ValueError(f"bot version {version.pk} has no rating sequence")
    return version.rating_sequence


def counted_matches() -> QuerySet[Match]:
    """The matches that changed the public ratings, the ones a recompute replays."""
    return Match.objects.filter(rated=True, rating_sequence__isnull=False)


def latest_finishes(*, variant_id: int, limit: int) -> list[list[Finish]]:
    """The finishing orders of a variant's latest ``limit`` matches that changed its ratings,
    oldest first, each table its own unit but a duplicate group's rotations, which share their
    deals, one unit together (a ladder round's tables were dealt apart): what the batch ranks
    and the collusion scan read."""
    rows = list(
        counted_matches()
        .filter(variant_id=variant_id)
        .order_by("-rating_sequence")
        .values_list("pk", "rating_group", "duplicate_group")[:limit]
    )
    rows.reverse()
    seats = seats_by_match([pk for pk, _, _ in rows])
    units: dict[str | int, list[Finish]] = {}
    for pk, group, dealt_together in rows:
        standing = match_standing(seats[pk])
        units.setdefault(group if group and dealt_together else pk, []).append(
            Finish(bots=tuple(standing.bots), places=tuple(standing.ranks))
        )
    return list(units.values())


def _split_counted(units: list[list[Match]]) -> tuple[list[list[Match]], list[Match]]:
    """The units that change the public ratings, and the matches of unrated tournaments and of
    scrimmages (which are never rated)."""
    tournament_ids = {unit[0].tournament_id for unit in units if unit[0].tournament_id}
    rated_ids = set(
        Tournament.objects.filter(pk__in=tournament_ids, rated=True).values_list("pk", flat=True)
    )
    counted: list[list[Match]] = []
    skipped: list[Match] = []
    for unit in units:
        tournament_id = unit[0].tournament_id
        if unit[0].scrimmage_id is not None:
            skipped += unit
        elif tournament_id is None or tournament_id in rated_ids:
            counted.append(unit)
        else:
            skipped += unit
    return counted, skipped


def _last_history_at() -> datetime | None:
    """The time of the latest update in the sequence (an index scan of history by sequence)."""
    return RatingHistory.objects.order_by("-sequence").values_list("at", flat=True).first()


def ratings_apply_pending(*, batch: int = 500) -> int:
    """Rate every finished, unrated match and apply new bot versions, oldest first; return how
    many matches and versions were applied.

    A duplicate rotation waits until the rest of its group has ended; waiting rotations are
    left out of the batch, so any number of them never holds up the matches behind them.
    """
    total = 0
    while True:
        done = _apply_batch(batch)
        total += done
        if done < batch:
            return total


OPEN = (MatchStatus.QUEUED, MatchStatus.RUNNING)


def _waiting_group() -> Q:
    """Matches of a duplicate group that still has a rotation queued or running, or of a ladder
    round that still has a table queued or running."""
    # A group belongs to a tournament or to a ladder (the other column is NULL, never equal).
    rotation = Match.objects.filter(
        Q(tournament_id=OuterRef("tournament_id")) | Q(ladder_id=OuterRef("ladder_id")),
        duplicate_group=OuterRef("duplicate_group"),
        status__in=OPEN,
    )
    table = Match.objects.filter(
        ladder_id=OuterRef("ladder_id"), table_round=OuterRef("table_round"), status__in=OPEN
    )
    return (~Q(duplicate_group="") & Q(Exists(rotation))) | (~Q(table_round="") & Q(Exists(table)))


def _together(match: Match) -> QuerySet[Match] | None:
    """The matches rated with ``match`` when all have ended: its duplicate group's rotations or
    its ladder round's tables; None for a match rated alone."""
    if match.duplicate_group:
        # One of the two is None, which Django reads as IS NULL; the stubs refuse None here.
        return Match.objects.filter(  # type: ignore[misc]
            tournament_id=match.tournament_id,
            ladder_id=match.ladder_id,
            duplicate_group=match.duplicate_group,
        )
    if match.table_round and match.ladder_id is not None:
        return Match.objects.filter(ladder_id=match.ladder_id, table_round=match.table_round)
    return None


def _units(pending: list[Match]) -> list[list[Match]]:
    """What to rate: single matches, and whole groups of two or more finished rotations or
    round tables.

    Units come in the order their last match ended (ties by first match id), so sequence
    numbers follow the time the updates became possible.
    """
    units: list[list[Match]] = []
    seen: set[int] = set()
    for match in pending:
        if match.pk in seen:
            continue
        members = [match]
        together = _together(match)
        if together is not None:
            if together.filter(status__in=OPEN).exists():
                continue  # a rotation was queued again, or a table joined, since the batch was read
            group = list(
                together.filter(status=MatchStatus.FINISHED, rated=False).order_by(
                    "finished_at", "pk"
                )
            )
            if len(group) >= 2:
                members = group
        seen.update(m.pk for m in members)
        units.append(members)
    units.sort(key=lambda unit: (max(ended_at(m) for m in unit), unit[0].pk))
    return units


@transaction.atomic
def _apply_batch(batch: int) -> int:
    lock_ratings()
    pending = list(
        Match.objects.filter(status=MatchStatus.FINISHED, rated=False)
        .exclude(_waiting_group())
        .order_by("finished_at", "pk")[:batch]
    )
    units, skipped = _split_counted(_units(pending))
    versions = list(
        BotVersion.objects.filter(rating_sequence__isnull=True).order_by("created_at", "pk")[:batch]
    )
    if not units and not skipped and not versions:
        return 0
    rated = [m for unit in units for m in unit]
    seats = seats_by_match([m.pk for m in rated])
    state = _load_state(
        ((s.bot_id, m.variant_id) for m in rated for s in seats[m.pk]),
        every_variant_of={v.bot_id for v in versions},
    )
    raw_params = dict(
        Variant.objects.filter(pk__in={m.variant_id for m in rated}).values_list(
            "pk", "rating_params"
        )
    )
    # Matches and versions in the order they happened (a version before a match at a tie).
    events: list[tuple[datetime, int, int, list[Match] | BotVersion]] = [
        *((v.created_at, 0, v.pk, v) for v in versions),
        *((max(ended_at(m) for m in unit), 1, unit[0].pk, unit) for unit in units),
    ]
    events.sort(key=lambda event: event[:3])
    sequence = _next_sequence()
    at = _last_history_at()
    history: list[HistoryRow] = []
    now = timezone.now()
    for when, _, _, event in events:
        if isinstance(event, BotVersion):
            rows = rate_version(state, event, sequence, effective_at(when, at))
            event.rating_sequence = sequence
            sequence += 1
        else:
            rows = _rate_members(state, raw_params, event, seats, sequence, effective_at(when, at))
            for match in event:
                match.rated, match.rated_at, match.rating_sequence = True, now, sequence
                sequence += 1
        if rows:
            at = rows[0].at
            history += rows
    for match in skipped:
        match.rated, match.rated_at = True, now
    save_state(state)
    save_history(history)
    forget_leaderboards({variant_id for _, variant_id in state.values})
    forget_histories({row.bot_id for row in history})
    forget_bot_analytics({(row.bot_id, row.variant_id) for row in history})
    update_rows(Match, rated + skipped, ["rated", "rated_at", "rating_sequence", "rating_group"])
    update_rows(BotVersion, versions, ["rating_sequence"])
    return len(rated) + len(skipped) + len(versions)


def _rate_members(
    state: RatingState,
    raw_params: dict[int, dict | None],
    members: list[Match],
    seats: dict[int, list[SeatRow]],
    sequence: int,
    at: datetime,
) -> list[HistoryRow]:
    """Rate one unit of matches at ``sequence``, naming the group when there are several."""
    leader = members[0]
    where = leader.tournament_id if leader.ladder_id is None else f"ladder-{leader.ladder_id}"
    name = leader.duplicate_group or leader.table_round
    unit = Unit.of(
        members=[m.pk for m in members],
        variant_id=leader.variant_id,
        finished_at=max(ended_at(m) for m in members),
        group=f"{where}:{name}#{sequence}" if len(members) > 1 else "",
        rotations=bool(leader.duplicate_group),
    )
    for match in members:
        match.rating_group = unit.group
    params = state.params_for(unit.variant_id, raw_params[unit.variant_id])
    return rate_unit(state, params, unit, seats, sequence, at)
