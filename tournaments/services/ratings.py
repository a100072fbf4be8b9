"""Apply TrueSkill updates exactly once, in a fixed order (a recompute replays them: recompute.py).

What one update does is rating_core.py's, shared with the recompute; rating_writer.py writes
the ratings and their history back and holds the lock every rating writer takes.

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
from datetime import datetime

from django.db import transaction
from django.db.models import Exists, Max, OuterRef, Q, QuerySet
from django.utils import timezone

from tournaments.models import (
    BotVersion,
    Match,
    MatchStatus,
    Rating,
    RatingHistory,
    Tournament,
    Variant,
)
from tournaments.selectors.rated_matches import SeatRow, seats_by_match
from tournaments.services.analytics import forget_bot_analytics
from tournaments.services.collusion_totals import CollusionRecorder
from tournaments.services.rating_core import (
    HistoryRow,
    RatingState,
    RatingValue,
    Unit,
    effective_at,
    ended_at,
    rate_unit,
    rate_version,
)
from tournaments.services.rating_writer import (
    forget_histories,
    forget_leaderboards,
    lock_ratings,
    save_history,
    save_state,
)
from tournaments.services.rows import update_rows

log = logging.getLogger(__name__)


def _load_state(pairs: Iterable[tuple[int, int]], every_variant_of: set[int]) -> RatingState:
    """The ratings of ``pairs`` (bot, variant), and of every variant of ``every_variant_of``."""
    state = RatingState(values={}, params={})
    pairs = set(pairs)
    bot_ids = {b for b, _ in pairs} | every_variant_of
    for r in Rating.objects.filter(bot_id__in=bot_ids).only(
        "bot", "variant", "mu", "sigma", "matches"
    ):
        if (r.bot_id, r.variant_id) in pairs or r.bot_id in every_variant_of:
            state.values[(r.bot_id, r.variant_id)] = RatingValue(r.mu, r.sigma, r.matches)
    return state


def _next_sequence() -> int:
    """The number the next update takes: matches and bot versions share one sequence."""
    top = Match.objects.aggregate(top=Max("rating_sequence"))["top"] or 0
    versions = BotVersion.objects.aggregate(top=Max("rating_sequence"))["top"] or 0
    return max(top, versions) + 1


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
    collusion = CollusionRecorder()
    now = timezone.now()
    for when, _, _, event in events:
        if isinstance(event, BotVersion):
            rows = rate_version(state, event, sequence, effective_at(when, at))
            event.rating_sequence = sequence
            sequence += 1
        else:
            counted_at = effective_at(when, at)
            rows = _rate_members(state, raw_params, event, seats, sequence, counted_at, collusion)
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
    collusion.save()
    forget_leaderboards({variant_id for _, variant_id in state.values})
    forget_histories({row.bot_id for row in history})
    forget_bot_analytics({(row.bot_id, row.variant_id) for row in history})
    update_rows(Match, rated + skipped, ["rated", "rated_at", "rating_sequence", "rating_group"])
    update_rows(BotVersion, versions, ["rating_sequence"])
    done = [(m.pk, m.rating_sequence) for m in rated]
    transaction.on_commit(lambda: _log_rated(done))
    return len(rated) + len(skipped) + len(versions)


def _log_rated(matches: list[tuple[int, int | None]]) -> None:
    """One line per rated match, once its rating is committed (docs/operations.md, Logs)."""
    for match_id, sequence in matches:
        log.info("match rated", extra={"match_id": match_id, "rating_sequence": sequence})


def _rate_members(
    state: RatingState,
    raw_params: dict[int, dict | None],
    members: list[Match],
    seats: dict[int, list[SeatRow]],
    sequence: int,
    at: datetime,
    collusion: CollusionRecorder,
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
    return rate_unit(state, params, unit, seats, sequence, at, collusion)
