"""Apply TrueSkill updates exactly once, in a fixed order, and recompute them from scratch.

Every application runs under one lock (a PostgreSQL advisory lock; SQLite serialises writers
anyway) and in one transaction with the match's ``rated`` flag, so a match is rated once even
with many workers finishing at the same moment, and a worker dying mid-update leaves nothing
half-applied. Each rated match takes the next ``rating_sequence``; a recompute replays the
matches in that order and so reproduces the numbers exactly.

The rotations of a duplicate group (the same deals with the bots moved round the seats) are
rated as ONE update once all of them have ended, ranked by the deal-by-deal comparison that
cancels the luck of the cards: rated match by match, duplicate converges no faster than random
deals (bench/bench_ratings_quality.py). Their history rows hang on the group's first match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from arena.match import rating_ranks
from tournaments.formats import DuplicateResult, duplicate_differences
from tournaments.models import (
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingHistory,
    RatingRecompute,
    RecomputeStatus,
    Replay,
    Variant,
)
from tournaments.rating_math import RatingParams, rate

RATING_LOCK_KEY = 7_042_017  # any constant shared by every process of this deployment
CHUNK = 2000


def _lock() -> None:
    """Serialise rating writers for the rest of the transaction."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [RATING_LOCK_KEY])


@dataclass
class _State:
    """Ratings being updated in memory: (bot, variant) -> [mu, sigma, matches]."""

    values: dict[tuple[int, int], list[float]]
    params: dict[int, RatingParams]

    def params_for(self, variant_id: int, raw: dict | None) -> RatingParams:
        if variant_id not in self.params:
            self.params[variant_id] = RatingParams.from_dict(raw)
        return self.params[variant_id]

    def get(self, bot_id: int, variant_id: int, params: RatingParams) -> list[float]:
        key = (bot_id, variant_id)
        if key not in self.values:
            self.values[key] = [params.mu, params.sigma, 0]
        return self.values[key]


# (bot, variant, match, sequence, mu_before, sigma_before, mu_after, sigma_after, at)
HistoryRow = tuple
# (seat, bot, score, disqualified) of one seat of a match
SeatRow = tuple[int, int, int | None, bool]
HISTORY_COLUMNS = (
    "bot_id",
    "variant_id",
    "match_id",
    "sequence",
    "mu_before",
    "sigma_before",
    "mu_after",
    "sigma_after",
    "at",
)


def _rate_match(
    state: _State,
    params: RatingParams,
    match: tuple[int, int, object],
    seats: list[SeatRow],
    sequence: int,
) -> list[HistoryRow]:
    """Update ``state`` with one match (id, variant, finished_at); return its history rows."""
    match_id, variant_id, finished_at = match
    seats = sorted(seats)
    ranks = rating_ranks([s[2] or 0 for s in seats], [s[3] for s in seats])
    current = [state.get(s[1], variant_id, params) for s in seats]
    after = rate(params, [(c[0], c[1]) for c in current], ranks)
    rows = []
    for seat, value, (mu, sigma) in zip(seats, current, after, strict=True):
        rows.append(
            (seat[1], variant_id, match_id, sequence, value[0], value[1], mu, sigma, finished_at)
        )
        value[0], value[1], value[2] = mu, sigma, value[2] + 1
    return rows


def _group_standing(
    members: list[int], seats: dict[int, list[SeatRow]]
) -> tuple[list[int], list[int], list[bool]]:
    """Bots of a duplicate group, their duplicate scores and whether any rotation dropped them."""
    replays = dict(Replay.objects.filter(match_id__in=members).values_list("match_id", "data"))
    results, dropped = [], set()
    for match_id in members:
        table = sorted(seats[match_id])
        deals = replays[match_id]["deals"]
        scores = [[d["scores"][s] for d in deals if d.get("scores")] for s in range(len(table))]
        results.append(DuplicateResult("group", tuple(s[1] for s in table), scores))
        dropped.update(s[1] for s in table if s[3])
    differences = duplicate_differences(results)
    bots = sorted(differences)
    return bots, [round(differences[b], 6) for b in bots], [b in dropped for b in bots]


def _rate_group(
    state: _State,
    params: RatingParams,
    group: tuple[list[int], int, object],
    seats: dict[int, list[SeatRow]],
    sequence: int,
) -> list[HistoryRow]:
    """Update ``state`` with a whole duplicate group; the rows go on its first match."""
    members, variant_id, finished_at = group
    bots, totals, dropped = _group_standing(members, seats)
    ranks = rating_ranks(totals, dropped)
    current = [state.get(bot, variant_id, params) for bot in bots]
    after = rate(params, [(c[0], c[1]) for c in current], ranks)
    rows = []
    for bot, value, (mu, sigma) in zip(bots, current, after, strict=True):
        rows.append(
            (bot, variant_id, members[0], sequence, value[0], value[1], mu, sigma, finished_at)
        )
        value[0], value[1], value[2] = mu, sigma, value[2] + 1
    return rows


def _save_history(rows: list[HistoryRow]) -> None:
    """Insert history rows: COPY on PostgreSQL (no model objects), bulk_create elsewhere."""
    if connection.vendor != "postgresql":
        RatingHistory.objects.bulk_create(
            [RatingHistory(**dict(zip(HISTORY_COLUMNS, row, strict=True))) for row in rows],
            batch_size=CHUNK,
        )
        return
    sql = f"COPY {RatingHistory._meta.db_table} ({', '.join(HISTORY_COLUMNS)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.connection.cursor() as raw, raw.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)


def _load_state(pairs: Iterable[tuple[int, int]]) -> _State:
    state = _State(values={}, params={})
    pairs = set(pairs)
    bot_ids = {b for b, _ in pairs}
    for r in Rating.objects.filter(bot_id__in=bot_ids).only(
        "bot", "variant", "mu", "sigma", "matches"
    ):
        if (r.bot_id, r.variant_id) in pairs:
            state.values[(r.bot_id, r.variant_id)] = [r.mu, r.sigma, r.matches]
    return state


def _save_state(state: _State, *, replace: bool = False) -> None:
    """Write the in-memory ratings back (insert new pairs, update existing ones)."""
    existing = {
        (r.bot_id, r.variant_id): r
        for r in Rating.objects.filter(bot_id__in={b for b, _ in state.values})
    }
    now = timezone.now()
    new, changed = [], []
    for (bot_id, variant_id), (mu, sigma, count) in state.values.items():
        row = existing.get((bot_id, variant_id))
        if row is None:
            new.append(
                Rating(bot_id=bot_id, variant_id=variant_id, mu=mu, sigma=sigma, matches=count)
            )
        else:
            row.mu, row.sigma, row.matches, row.updated_at = mu, sigma, int(count), now
            changed.append(row)
    Rating.objects.bulk_create(new, batch_size=CHUNK)
    _update_rows(Rating, changed, ["mu", "sigma", "matches", "updated_at"])


def _update_rows(model, objects: list, columns: list[str]) -> None:
    """Write ``columns`` of ``objects`` back: one UPDATE ... FROM (VALUES ...) per chunk.

    Django's bulk_update builds a CASE WHEN per row and column in Python, which cost most of
    the time of rating a backlog; other databases keep it.
    """
    if not objects:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_update(objects, columns, batch_size=CHUNK)
        return
    meta = model._meta
    names = [meta.pk.column, *(meta.get_field(c).column for c in columns)]
    casts = [meta.get_field(c).db_type(connection) for c in [meta.pk.name, *columns]]
    row = "(" + ", ".join(f"%s::{cast}" for cast in casts) + ")"
    sets = ", ".join(f"{name} = v.{name}" for name in names[1:])
    for start in range(0, len(objects), CHUNK):
        chunk = objects[start : start + CHUNK]
        params = [getattr(o, f) for o in chunk for f in [meta.pk.attname, *columns]]
        sql = (
            f"UPDATE {meta.db_table} AS t SET {sets} FROM (VALUES {', '.join([row] * len(chunk))})"
            f" AS v({', '.join(names)}) WHERE t.{names[0]} = v.{names[0]}"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, params)


def _seats_by_match(match_ids: list[int]) -> dict[int, list[SeatRow]]:
    seats: dict[int, list[SeatRow]] = {m: [] for m in match_ids}
    rows = MatchSeat.objects.filter(match_id__in=match_ids).values_list(
        "match_id", "seat", "bot_id", "score", "disqualified"
    )
    for match_id, *seat in rows:
        seats[match_id].append(tuple(seat))
    return seats


def ratings_apply_pending(*, batch: int = 500) -> int:
    """Rate every finished, unrated match, oldest first; return how many were rated.

    A duplicate rotation waits until the rest of its group has ended.
    """
    total = 0
    while True:
        done = _apply_batch(batch)
        total += done
        if done < batch:
            return total


def _ready_groups(pending: list[Match]) -> dict[tuple[int, str], list[Match]]:
    """Duplicate groups among ``pending`` whose rotations have all ended, with their members."""
    keys = {(m.tournament_id, m.duplicate_group) for m in pending if m.duplicate_group}
    groups: dict[tuple[int, str], list[Match]] = {}
    for tournament_id, name in keys:
        rotations = Match.objects.filter(tournament_id=tournament_id, duplicate_group=name)
        if rotations.filter(status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING]).exists():
            groups[(tournament_id, name)] = []  # wait for the last rotation
            continue
        groups[(tournament_id, name)] = list(
            rotations.filter(status=MatchStatus.FINISHED, rated=False)
            .select_related("variant")
            .order_by("finished_at", "pk")
        )
    return groups


def _units(pending: list[Match]) -> list[list[Match]]:
    """What to rate, in order: single matches, and whole groups of two or more rotations."""
    groups = _ready_groups(pending)
    units, seen = [], set()
    for match in pending:
        if match.pk in seen:
            continue
        members = [match]
        if match.duplicate_group:
            group = groups[(match.tournament_id, match.duplicate_group)]
            if not group:
                continue  # a rotation is still to be played
            if len(group) >= 2:
                members = group
        seen.update(m.pk for m in members)
        units.append(members)
    return units


@transaction.atomic
def _apply_batch(batch: int) -> int:
    _lock()
    pending = list(
        Match.objects.filter(status=MatchStatus.FINISHED, rated=False)
        .select_related("variant")
        .order_by("finished_at", "pk")[:batch]
    )
    units = _units(pending)
    if not units:
        return 0
    rated = [m for unit in units for m in unit]
    seats = _seats_by_match([m.pk for m in rated])
    state = _load_state((s[1], m.variant_id) for m in rated for s in seats[m.pk])
    sequence = Match.objects.aggregate(top=Max("rating_sequence"))["top"] or 0
    history: list[HistoryRow] = []
    now = timezone.now()
    for unit in units:
        leader = unit[0]
        params = state.params_for(leader.variant_id, leader.variant.rating_params)
        if len(unit) == 1:
            key = (leader.pk, leader.variant_id, leader.finished_at)
            history += _rate_match(state, params, key, seats[leader.pk], sequence + 1)
        else:
            group = ([m.pk for m in unit], leader.variant_id, max(m.finished_at for m in unit))
            history += _rate_group(state, params, group, seats, sequence + 1)
        for match in unit:
            sequence += 1
            match.rated, match.rated_at, match.rating_sequence = True, now, sequence
            if len(unit) > 1:
                match.rating_group = f"{match.tournament_id}:{match.duplicate_group}"
    _save_state(state)
    _save_history(history)
    _update_rows(Match, rated, ["rated", "rated_at", "rating_sequence", "rating_group"])
    return len(rated)


@transaction.atomic
def ratings_recompute(*, progress: Callable[[int, int], None] | None = None) -> int:
    """Rebuild every rating and history row from the stored results, in sequence order."""
    _lock()
    rated = Match.objects.filter(rated=True).order_by("rating_sequence")
    total = rated.count()
    RatingHistory.objects.all().delete()
    Rating.objects.all().delete()
    state = _State(values={}, params={})
    raw_params = dict(Variant.objects.values_list("pk", "rating_params"))
    done = 0
    last_sequence = 0
    groups_done: set[str] = set()
    while True:
        chunk = list(
            rated.filter(rating_sequence__gt=last_sequence).values_list(
                "pk", "variant_id", "finished_at", "rating_sequence", "rating_group"
            )[:CHUNK]
        )
        if not chunk:
            break
        seats = _seats_by_match([m[0] for m in chunk])
        history: list[HistoryRow] = []
        for match_id, variant_id, finished_at, sequence, group in chunk:
            params = state.params_for(variant_id, raw_params[variant_id])
            if not group:
                key = (match_id, variant_id, finished_at)
                history += _rate_match(state, params, key, seats[match_id], sequence)
            elif group not in groups_done:
                groups_done.add(group)
                history += _recompute_group(state, params, group, variant_id, sequence)
        _save_history(history)
        last_sequence = chunk[-1][3]
        done += len(chunk)
        if progress is not None:
            progress(done, total)
    _save_state(state)
    return done


def _recompute_group(
    state: _State, params: RatingParams, group: str, variant_id: int, sequence: int
) -> list[HistoryRow]:
    """Rate a duplicate group again exactly as it was first rated (same members, same order)."""
    members = list(
        Match.objects.filter(rating_group=group, rated=True)
        .order_by("rating_sequence")
        .values_list("pk", "finished_at")
    )
    ids = [m[0] for m in members]
    key = (ids, variant_id, max(m[1] for m in members))
    return _rate_group(state, params, key, _seats_by_match(ids), sequence)


def recompute_progress_key(recompute_id: int) -> str:
    """Cache key holding [done, total] of a running recompute."""
    return f"ohhell:recompute:{recompute_id}"


def ratings_request_recompute(*, requested_by=None) -> RatingRecompute:
    """Queue a background recompute; one already queued or running is returned instead."""
    with transaction.atomic():
        _lock()
        active = RatingRecompute.objects.filter(
            status__in=[RecomputeStatus.QUEUED, RecomputeStatus.RUNNING]
        ).first()
        if active is not None:
            return active
        job = RatingRecompute.objects.create(requested_by=requested_by)
        from tournaments.tasks import recompute_ratings

        job_id = job.pk
        transaction.on_commit(lambda: recompute_ratings.delay(job_id))
    return job


def ratings_recompute_job(*, recompute_id: int) -> str:
    """Run a queued recompute, writing progress to its row as it goes."""
    claimed = RatingRecompute.objects.filter(pk=recompute_id, status=RecomputeStatus.QUEUED).update(
        status=RecomputeStatus.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return "not-queued"

    def progress(done: int, total: int) -> None:
        # The recompute is one transaction, so a row update would only show at commit; the
        # cache (Redis when configured) is seen by every process at once.
        cache.set(recompute_progress_key(recompute_id), [done, total], timeout=3600)

    try:
        total = Match.objects.filter(rated=True).count()
        RatingRecompute.objects.filter(pk=recompute_id).update(total=total)
        done = ratings_recompute(progress=progress)
    except Exception as exc:
        RatingRecompute.objects.filter(pk=recompute_id).update(
            status=RecomputeStatus.FAILED, error=repr(exc)[:2000], finished_at=timezone.now()
        )
        raise
    RatingRecompute.objects.filter(pk=recompute_id).update(
        status=RecomputeStatus.FINISHED, done=done, total=done, finished_at=timezone.now()
    )
    return "finished"
