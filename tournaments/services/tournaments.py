"""Tournaments: create, start (now or at a time), generate fixtures, pause, resume, cancel.

Fixtures come from the pure generators in ``tournaments.formats``; this module turns them into
queued matches and moves the tournament through its states. Swiss rounds are generated one at
a time as the previous round ends; a ladder keeps a few matches in flight until its match
budget (``rounds`` matches per entered bot) is spent.

A tournament's matches are made by a worker on the bulk queue, a batch at a time, each batch
in a transaction of its own, as its fixtures are made (a round robin's come a few rounds at a
time, ``round_robin_stream``), so the first matches play within seconds of the start while
later fixtures are still being made; they wait unsent, and the tournament keeps only
``TOURNAMENT_MATCHES_IN_FLIGHT`` of them sent and unfinished (``_send_window``), sending more
as matches end. So no start holds the tournament's row for long, one tournament's messages
never fill the matches queue, and a cancelled one leaves few messages behind.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from itertools import islice
from typing import NamedTuple

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from arena.timebank import DEFAULT_TIME_BANK_MS
from tournaments import dispatch, formats
from tournaments.dispatch import Task
from tournaments.errors import ApplicationError, ConflictError, PermissionDeniedError
from tournaments.formats.matchmaking import Candidate, pick_tables
from tournaments.maths.ratings import RatingParams
from tournaments.models import (
    Bot,
    BotStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    Tournament,
    TournamentEntry,
    TournamentFormat,
    TournamentStatus,
    Variant,
)
from tournaments.provisional import is_provisional
from tournaments.selectors.teams import bot_teams
from tournaments.selectors.tournaments import planned_matches, swiss_byes, swiss_points
from tournaments.services.competitions import check_table, competition_move
from tournaments.services.matches import match_enqueue, matches_create

MAX_ENTRIES = 2000
MAX_FIXTURES = 100_000
# Matches made in one transaction while a tournament starts.
GENERATE_BATCH = 1000
TERMINAL = (MatchStatus.FINISHED, MatchStatus.FAILED, MatchStatus.CANCELLED)


def _check_consent(organiser: User, bots: Sequence[Bot]) -> None:
    """Refuse bots of other owners who have not opted in to invitations; staff included."""
    refused = sorted(
        b.name for b in bots if b.owner_id != organiser.pk and not b.accept_invitations
    )
    if refused:
        raise PermissionDeniedError(
            "these bots belong to other users who do not accept invitations to tournaments: "
            f"{', '.join(refused)} (an owner opts in with accept_invitations)",
            field="bots",
        )


def _entries(organiser: User, bot_ids: Sequence[int], table_size: int) -> list[Bot]:
    if len(set(bot_ids)) != len(bot_ids):
        raise ApplicationError("a bot is entered twice", field="bots")
    if len(bot_ids) > MAX_ENTRIES:
        raise ApplicationError(f"at most {MAX_ENTRIES} bots may enter", field="bots")
    bots = list(Bot.objects.filter(pk__in=bot_ids))
    missing = sorted(set(bot_ids) - {b.pk for b in bots})
    if missing:
        raise ApplicationError(f"no bot with id {missing[0]}", field="bots")
    _check_consent(organiser, bots)
    inactive = sorted(b.name for b in bots if b.status != BotStatus.ACTIVE)
    if inactive:
        raise ApplicationError(
            f"only active bots may enter; not active: {', '.join(inactive)}", field="bots"
        )
    if len(bots) < table_size:
        raise ApplicationError(
            f"a table of {table_size} needs at least {table_size} bots", field="bots"
        )
    return bots


@transaction.atomic
def tournament_create(
    *,
    organiser: User,
    name: str,
    variant: Variant,
    format: str,
    bot_ids: Sequence[int],
    table_size: int = 4,
    time_limit_ms: int = 1000,
    time_bank_ms: int = DEFAULT_TIME_BANK_MS,
    rounds: int = 1,
    start_at: datetime | None = None,
    description: str = "",
    seed: int | None = None,
    rated: bool = False,
) -> Tournament:
    """Create a tournament with its entries; scheduled when ``start_at`` is given, else draft.

    Only staff may make it ``rated`` (its matches then change the public ratings): an organiser
    choosing the field could feed their own bot weak opponents.
    """
    if rated and not organiser.is_staff:
        raise PermissionDeniedError("Only staff may mark a tournament rated.", field="rated")
    if format not in TournamentFormat.values:
        raise ApplicationError(f"unknown format {format!r}", field="format")
    check_table(variant, table_size)
    bots = _entries(organiser, bot_ids, table_size)
    if start_at is not None and start_at < timezone.now() - timedelta(minutes=1):
        raise ApplicationError("start_at is in the past", field="start_at")
    tournament = Tournament(
        name=name,
        description=description,
        organiser=organiser,
        variant=variant,
        format=format,
        table_size=table_size,
        time_limit_ms=time_limit_ms,
        time_bank_ms=time_bank_ms,
        rounds=rounds,
        start_at=start_at,
        status=TournamentStatus.SCHEDULED if start_at else TournamentStatus.DRAFT,
        rated=rated,
    )
    if seed is not None:
        tournament.seed = seed
    tournament.full_clean(exclude=["organiser", "variant"])
    tournament.save()
    TournamentEntry.objects.bulk_create(TournamentEntry(tournament=tournament, bot=b) for b in bots)
    return tournament


def tournament_update(*, tournament: Tournament, name: str, description: str) -> Tournament:
    """Rename a tournament or change its description. What it plays is fixed when it is
    created, with its entries' consent checked then: cancel it and create another instead."""
    tournament.name, tournament.description = name, description
    tournament.full_clean(exclude=["organiser", "variant"])
    tournament.save(update_fields=["name", "description", "updated_at"])
    return tournament


def _fixtures(tournament: Tournament, bot_ids: list[int]) -> Iterator[formats.Fixture]:
    """All fixtures of formats that are known up front, in order as they are made; the first
    round of the others."""
    size, rounds, seed = tournament.table_size, tournament.rounds, tournament.seed
    try:
        if tournament.format == TournamentFormat.ROUND_ROBIN:
            yield from formats.round_robin_stream(bot_ids, size, rounds, seed)
            return
        yield from _listed(tournament, bot_ids)
    except formats.FixtureError as exc:
        raise ApplicationError(str(exc)) from None


def _listed(tournament: Tournament, bot_ids: list[int]) -> list[formats.Fixture]:
    """The fixtures of the formats made all at once."""
    size, rounds, seed = tournament.table_size, tournament.rounds, tournament.seed
    if tournament.format == TournamentFormat.DUPLICATE:
        return formats.duplicate(bot_ids, size, rounds, seed)
    if tournament.format == TournamentFormat.SWISS:
        return formats.swiss_round([(b, 0.0) for b in bot_ids], size, 0, seed, set())
    return []


def _check_fixture_count(tournament: Tournament, bots: int) -> None:
    """Refuse a tournament of more than MAX_FIXTURES matches in all, counted without making them."""
    try:
        count = planned_matches(tournament=tournament, bots=bots)
    except formats.FixtureError as exc:
        raise ApplicationError(str(exc)) from None
    if count is not None and count > MAX_FIXTURES:
        raise ApplicationError(
            f"{count} matches is more than the {MAX_FIXTURES} allowed", field="rounds"
        )


def _create_matches(tournament: Tournament, fixtures: Sequence[formats.Fixture]) -> int:
    return len(matches_create(fixtures=fixtures, competition=tournament))


def _send_window(tournament: Tournament) -> int:
    """Send the tournament's next unsent matches, up to TOURNAMENT_MATCHES_IN_FLIGHT sent and
    unfinished; return how many were sent. The caller holds the tournament's row lock, so two
    callers never send the same match."""
    in_flight = tournament.matches.filter(
        status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING], unsent=False
    ).count()
    wanted = settings.TOURNAMENT_MATCHES_IN_FLIGHT - in_flight
    if wanted <= 0:
        return 0
    ids = list(
        tournament.matches.filter(status=MatchStatus.QUEUED, unsent=True)
        .order_by("pk")
        .values_list("pk", flat=True)[:wanted]
    )
    Match.objects.filter(pk__in=ids).update(unsent=False, updated_at=timezone.now())
    for pk in ids:
        match_enqueue(match=Match(pk=pk, ladder_id=None))
    return len(ids)


def _entered_bot_ids(tournament: Tournament) -> list[int]:
    return list(tournament.entries.order_by("bot_id").values_list("bot_id", flat=True))


@transaction.atomic
def tournament_start(*, tournament: Tournament) -> Tournament:
    """Check the number of matches, mark the tournament starting and queue their making.

    Answers at once however big the tournament: the matches are counted, not made; a worker
    creates and queues them (tournament_generate) and moves the tournament on to running.
    """
    tournament = Tournament.objects.select_for_update().get(pk=tournament.pk)
    return _start(tournament)


def _start(tournament: Tournament) -> Tournament:
    """Start a tournament whose row the caller has locked."""
    if tournament.status not in (TournamentStatus.DRAFT, TournamentStatus.SCHEDULED):
        raise ConflictError(f"a {tournament.status} tournament cannot be started")
    _check_fixture_count(tournament, tournament.entries.count())
    tournament.status = TournamentStatus.STARTING
    tournament.started_at = timezone.now()
    tournament.save(update_fields=["status", "started_at", "updated_at"])
    dispatch.send(Task.GENERATE_TOURNAMENT, tournament.pk)
    return tournament


def tournament_generate(*, tournament_id: int) -> str:
    """Create a starting tournament's matches (its first round, for Swiss), then run it.

    Run by a worker on the bulk queue. The fixtures are made outside any transaction, a batch
    at a time as the format hands them out; the matches of each batch are created in a
    transaction that holds the tournament's row only while it writes, and the first are sent
    (and played) as soon as they exist, while later fixtures are still being made. The matches
    made so far are the first fixtures in order, so a second delivery, or a run again after a
    lost worker, carries on where the other stopped; one that finds another ahead of it, or the
    tournament running (or cancelled), stops.
    """
    tournament = Tournament.objects.filter(pk=tournament_id).first()
    if tournament is None or tournament.status != TournamentStatus.STARTING:
        return "idle"
    if tournament.format == TournamentFormat.LADDER:
        with transaction.atomic():
            locked = _locked_starting(tournament_id)
            if locked is None:
                return "idle"
            _run(locked)
            ladder_fill(tournament=locked)
        return "running"
    fixtures = _fixtures(tournament, _entered_bot_ids(tournament))
    made = tournament.matches.count()
    for _ in islice(fixtures, made):
        pass  # made by an earlier delivery
    while True:
        batch = list(islice(fixtures, GENERATE_BATCH))
        with transaction.atomic():
            locked = _locked_starting(tournament_id)
            if locked is None or locked.matches.count() != made:
                return "idle"  # ended, or another delivery is ahead and carries on
            matches_create(fixtures=batch, competition=locked, held=True)
            _send_window(locked)
            made += len(batch)
            if len(batch) < GENERATE_BATCH:
                _run(locked)
                return "running"
            locked.save(update_fields=["updated_at"])  # still being made: not stale


def _locked_starting(tournament_id: int) -> Tournament | None:
    """Lock the tournament's row if it is still starting."""
    return (
        Tournament.objects.select_for_update()
        .filter(pk=tournament_id, status=TournamentStatus.STARTING)
        .first()
    )


def _run(tournament: Tournament) -> None:
    """Move a locked starting tournament to running, and look at it once its matches exist: any
    that ended while it was starting advanced nothing."""
    tournament.status = TournamentStatus.RUNNING
    tournament.save(update_fields=["status", "updated_at"])
    dispatch.send(Task.ADVANCE_TOURNAMENT, tournament.pk)


def tournament_start_due(*, now: datetime | None = None) -> int:
    """Start every scheduled tournament whose time has come (run by Celery beat).

    A tournament another run (or an organiser) holds is skipped, not waited for: two beats of
    this never queue up behind one row.
    """
    now = now or timezone.now()
    due = Tournament.objects.filter(status=TournamentStatus.SCHEDULED, start_at__lte=now)
    started = 0
    for tournament_id in list(due.values_list("pk", flat=True)[:1000]):
        try:
            with transaction.atomic():
                tournament = (
                    due.select_for_update(skip_locked=True).filter(pk=tournament_id).first()
                )
                if tournament is None:
                    continue  # being started by another run or by hand, or started already
                _start(tournament)
                started += 1
        except ApplicationError:
            continue  # too many matches: stays scheduled, and its organiser sees it cannot start
    return started


@transaction.atomic
def tournament_pause(*, tournament: Tournament) -> Tournament:
    """Stop claiming this tournament's queued matches; running ones finish."""
    return competition_move(tournament, {TournamentStatus.RUNNING}, TournamentStatus.PAUSED)


@transaction.atomic
def tournament_resume(*, tournament: Tournament) -> Tournament:
    """Run a paused tournament again and re-send its queued matches."""
    tournament = competition_move(tournament, {TournamentStatus.PAUSED}, TournamentStatus.RUNNING)
    sent = tournament.matches.filter(status=MatchStatus.QUEUED, unsent=False)
    for match in sent.only("pk", "ladder_id"):
        match_enqueue(match=match)
    _send_window(tournament)
    return tournament


@transaction.atomic
def tournament_cancel(*, tournament: Tournament) -> Tournament:
    """Cancel the tournament and its queued matches; finished results stay (and stay rated).

    Running matches are left alone: they play to the end, are recorded and rated. An organiser
    may have entered bots of their own, so cancelling must never void a match that is under
    way, whose running score its bots have seen.

    Locks: the tournament, then the queued matches. An outcome written into a failed match
    locks that match and then the tournament (``_write_outcome`` in
    tournaments/services/matches.py); no service makes a queued match failed, so this update
    never waits for a match whose writer waits for the tournament.
    """
    allowed = {
        TournamentStatus.DRAFT,
        TournamentStatus.SCHEDULED,
        TournamentStatus.STARTING,
        TournamentStatus.RUNNING,
        TournamentStatus.PAUSED,
    }
    tournament = competition_move(tournament, allowed, TournamentStatus.CANCELLED)
    tournament.matches.filter(status=MatchStatus.QUEUED).update(
        status=MatchStatus.CANCELLED, updated_at=timezone.now()
    )
    tournament.finished_at = timezone.now()
    if tournament.started_at is None:
        tournament.started_at = tournament.finished_at
    tournament.save(update_fields=["finished_at", "started_at", "updated_at"])
    return tournament


@transaction.atomic
def tournament_advance(*, tournament_id: int) -> str:
    """After a match ends: next Swiss round, ladder top-up, or finish when nothing is left."""
    tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
    if tournament is not None and tournament.status == TournamentStatus.STARTING:
        # Its first matches play while the rest are made: keep its window full meanwhile.
        return "sent" if _send_window(tournament) else "starting"
    if tournament is None or tournament.status != TournamentStatus.RUNNING:
        return "idle"
    if tournament.format == TournamentFormat.LADDER and ladder_fill(tournament=tournament):
        return "ladder"
    if _send_window(tournament):
        return "sent"
    open_matches = tournament.matches.exclude(status__in=TERMINAL).count()
    swiss = tournament.format == TournamentFormat.SWISS
    if swiss and open_matches == 0 and _next_swiss_round(tournament):
        return "swiss-round"
    if open_matches == 0:
        tournament.status = TournamentStatus.FINISHED
        tournament.finished_at = timezone.now()
        tournament.save(update_fields=["status", "finished_at", "updated_at"])
        return "finished"
    return "running"


class Reconciled(NamedTuple):
    """What one reconcile pass recovered."""

    restarted: int
    advanced: int


def tournaments_reconcile(*, stale_after: timedelta | None = None) -> Reconciled:
    """Recover tournaments a lost message left behind (run by Celery beat).

    A tournament still starting a while after its last batch of matches gets its fixtures
    generated again (a second delivery carries on where the first stopped); a running one
    whose matches have all ended, or that has matches still to send, is advanced (next Swiss
    round, more matches sent, or finished), as its last match's message would have. Queued
    matches nobody took are re-sent by the match sweeper (services/sweeps.py).
    """
    if stale_after is None:
        stale_after = timedelta(seconds=settings.MATCH_STALE_SECONDS)
    cutoff = timezone.now() - stale_after
    starting = list(
        Tournament.objects.filter(
            status=TournamentStatus.STARTING, updated_at__lt=cutoff
        ).values_list("pk", flat=True)[:1000]
    )
    for tournament_id in starting:
        dispatch.send(Task.GENERATE_TOURNAMENT, tournament_id)
    open_matches = Match.objects.filter(tournament=OuterRef("pk")).exclude(status__in=TERMINAL)
    unsent = Match.objects.filter(tournament=OuterRef("pk"), status=MatchStatus.QUEUED, unsent=True)
    ended = list(
        Tournament.objects.filter(status=TournamentStatus.RUNNING)
        .exclude(format=TournamentFormat.LADDER)
        .filter(~Exists(open_matches) | Exists(unsent))
        .values_list("pk", flat=True)[:1000]
    )
    advanced = sum(tournament_advance(tournament_id=pk) not in ("running", "sent") for pk in ended)
    return Reconciled(restarted=len(starting), advanced=advanced)


def _next_swiss_round(tournament: Tournament) -> bool:
    played_rounds = tournament.matches.values("round").distinct().count()
    if played_rounds >= tournament.rounds:
        return False
    points = swiss_points(tournament=tournament)
    history = {frozenset(seats) for seats in _tables(tournament)}
    had_bye = {bot for bot, n in swiss_byes(tournament=tournament).items() if n}
    fixtures = formats.swiss_round(
        sorted(points.items()),
        tournament.table_size,
        played_rounds,
        tournament.seed,
        history,
        had_bye=had_bye,
    )
    matches_create(fixtures=fixtures, competition=tournament, held=True)
    _send_window(tournament)
    return True


def _tables(tournament: Tournament) -> list[list[int]]:
    tables: dict[int, list[int]] = {}
    for match_id, bot_id in MatchSeat.objects.filter(match__tournament=tournament).values_list(
        "match_id", "bot_id"
    ):
        tables.setdefault(match_id, []).append(bot_id)
    return list(tables.values())


def ladder_fill(*, tournament: Tournament) -> int:
    """Keep ``LADDER_MATCHES_IN_FLIGHT`` ladder matches queued or running (the always-on
    ladders' setting); return how many were added.

    Tables come from the always-on ladders' matchmaker (``tournaments/formats/matchmaking.py``)
    among the entered bots not at an open table, with the games each played in this event. Bots
    of one team (tournaments/selectors/teams.py) are kept apart while any of the event's matches
    is open, as its bots come free again; only when nothing is in flight and no table can keep
    them apart (an organiser may enter many bots of one owner) does a table seat them together,
    so the event always finishes. The standings count such tables.
    """
    budget = tournament.rounds * tournament.entries.count() // tournament.table_size
    made = tournament.matches.count()
    in_flight = tournament.matches.exclude(status__in=TERMINAL).count()
    wanted = min(settings.LADDER_MATCHES_IN_FLIGHT - in_flight, budget - made)
    if wanted <= 0:
        return 0
    busy = set(
        MatchSeat.objects.filter(match__tournament=tournament)
        .exclude(match__status__in=TERMINAL)
        .values_list("bot_id", flat=True)
    )
    entered = _entered_bot_ids(tournament)
    seats: dict[int, list[int]] = {bot: [0] * tournament.table_size for bot in entered}
    for bot, seat in MatchSeat.objects.filter(match__tournament=tournament).values_list(
        "bot_id", "seat"
    ):
        seats[bot][seat] += 1
    ratings = {
        r.bot_id: r
        for r in Rating.objects.filter(variant_id=tournament.variant_id, bot_id__in=entered)
    }
    start = RatingParams.from_dict(tournament.variant.rating_params)
    teams = bot_teams(bot_ids=entered)
    candidates = [
        Candidate(
            id=bot,
            mu=ratings[bot].mu if bot in ratings else start.mu,
            sigma=ratings[bot].sigma if bot in ratings else start.sigma,
            provisional=is_provisional(ratings[bot].matches if bot in ratings else 0),
            recent=sum(seats[bot]),
            seats=tuple(seats[bot]),
            teams=teams[bot],
        )
        for bot in entered
        if bot not in busy
    ]
    rng = random.Random(formats.fixture_seed(tournament.seed, "ladder", made))
    tables = pick_tables(candidates, tournament.table_size, wanted, rng)
    if not tables and in_flight == 0:
        together = [replace(candidate, teams=frozenset()) for candidate in candidates]
        tables = pick_tables(together, tournament.table_size, 1, rng)
    fixtures = [
        formats.Fixture(
            round=made + i,
            table=0,
            seats=table,
            seed=formats.fixture_seed(tournament.seed, "ladder", made + i),
        )
        for i, table in enumerate(tables)
    ]
    return _create_matches(tournament, fixtures)
