"""What one rating update does to the ratings held in memory, shared by applying new matches
(tournaments/services/ratings.py) and replaying them all (tournaments/services/recompute.py), so
both reach the same numbers: a single match, a duplicate group's rotations or a ladder round's
tables rated as one unit, and a new bot version's raised sigma."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from engine.scoring import rating_ranks
from tournaments.formats import DuplicateResult, duplicate_differences
from tournaments.maths.intervals import Finish
from tournaments.maths.ratings import RatingParams, new_version_sigma, rate
from tournaments.models import BotVersion, Match, Replay
from tournaments.selectors.rated_matches import SeatRow, Standing, match_standing
from tournaments.services.collusion_totals import CollusionRecorder, RatedUnit


@dataclass(slots=True)
class RatingValue:
    """A rating being updated in memory."""

    mu: float
    sigma: float
    matches: int


@dataclass
class RatingState:
    """Ratings being updated in memory, by (bot, variant), and each variant's parameters."""

    values: dict[tuple[int, int], RatingValue]
    params: dict[int, RatingParams]

    def params_for(self, variant_id: int, raw: dict | None) -> RatingParams:
        if variant_id not in self.params:
            self.params[variant_id] = RatingParams.from_dict(raw)
        return self.params[variant_id]

    def get(self, bot_id: int, variant_id: int, params: RatingParams) -> RatingValue:
        key = (bot_id, variant_id)
        if key not in self.values:
            self.values[key] = RatingValue(params.mu, params.sigma, 0)
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
    collusion: CollusionRecorder,
) -> list[HistoryRow]:
    """Update ``state`` with one unit; return its history rows (on the unit's first match, or
    for a round on each bot's own table), and hand its tables to ``collusion``.

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
    before = {b: (c.mu, c.sigma) for b, c in zip(standing.bots, current, strict=True)}
    _record_collusion(collusion, unit, seats, before, params)
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


def _record_collusion(
    collusion: CollusionRecorder,
    unit: Unit,
    seats: dict[int, list[SeatRow]],
    before: dict[int, tuple[float, float]],
    params: RatingParams,
) -> None:
    """Hand the unit's tables to the collusion sums as the batch ranks read them: a duplicate
    group's rotations as one unit (they share their deals), any other table alone; only the
    bots rated, each with its rating before the unit."""
    finishes = []
    for match_id in unit.members:
        standing = match_standing([s for s in seats[match_id] if s.bot_id in before])
        finishes.append(Finish(bots=tuple(standing.bots), places=tuple(standing.ranks)))
    groups = [finishes] if unit.kind is UnitKind.ROTATIONS else [[f] for f in finishes]
    for group in groups:
        collusion.add(
            variant_id=unit.variant_id,
            unit=RatedUnit(finishes=group, before=before, beta=params.beta),
        )


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
