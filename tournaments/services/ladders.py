"""Always-on ladders: which bots play on them, switching ladders on, pausing, and top-ups.

A ladder never finishes. ``ladders_top_up`` (run when a ladder match ends, and by Celery beat
as a safety net for lost messages) keeps ``LADDER_MATCHES_IN_FLIGHT`` tables queued or playing
on every running ladder, choosing them with the pure matchmaker in
``tournaments/formats/matchmaking.py`` among the active, opted-in bots not already playing.

Fair by construction: no table seats two bots of one team (one owner, or one endpoint address
that is not a shared host: tournaments/selectors/teams.py), and when the free bots cannot make
a table under that rule the ladder waits. An account has at most ``LADDER_MAX_BOTS_PER_OWNER``
bots opted in and its bots sit at no more than ``LADDER_MAX_TABLES_PER_OWNER`` of a ladder's
open tables. Only bots of accounts that confirmed their email address play (``email_confirmed_q``
in tournaments/models/users.py): an account costs a mailbox of its own, not a click.

Tables started one after another join a round (``round_keys``) that is rated as one update of
all its bots once its last table ends (tournaments/services/ratings.py): no bot, owner or
endpoint address is at two tables of one round, so a team cannot rank one of its bots against
another.
"""

from __future__ import annotations

import random
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from arena.timebank import DEFAULT_TIME_BANK_MS
from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.errors import ConflictError, PermissionDeniedError
from tournaments.formats import Fixture, rotations
from tournaments.formats.matchmaking import Candidate, MatchmakingParams, pick_tables, slate_size
from tournaments.maths.ratings import ROUND_TABLES, RatingParams
from tournaments.models import (
    Bot,
    Ladder,
    LadderStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Variant,
    email_confirmed_q,
)
from tournaments.provisional import is_provisional
from tournaments.seeds import new_seed
from tournaments.selectors.ladders import FieldBot, ladder_slate, playable_bots
from tournaments.selectors.teams import bot_teams, owner_team, shared_hosts, team_keys
from tournaments.services.competitions import check_table, competition_move
from tournaments.services.matches import match_enqueue, matches_create
from tournaments.services.shares import (
    shares_add_tables,
    shares_move_window,
    shares_seat,
    shares_take_out_cancelled,
)

DEFAULT_LADDER_VARIANT = "oh-hell"
OPEN = (MatchStatus.QUEUED, MatchStatus.RUNNING)
# Why an opted-in bot waits off the ladders, and why an opt-in is refused, in the API and on the
# pages alike.
CONFIRM_EMAIL = (
    "confirm your email address first: the ladders seat only bots of accounts that confirmed "
    "theirs (see your account page)"
)


def ladders_top_up_soon() -> None:
    """Send a top-up to the control queue once the current transaction commits."""
    dispatch.send(Task.TOP_UP_LADDERS)


@transaction.atomic
def bot_set_ladder_opt_in(*, bot: Bot, enabled: bool) -> Bot:
    """Opt a bot into the ladders or out of them; only its active periods are scheduled.

    A bot that is pending verification or disabled keeps its choice and is left out of ladder
    tables until it passes ``hello`` again (the next top-up after that seats it). An owner
    whose email address is not confirmed is refused (403), and so is one with
    ``LADDER_MAX_BOTS_PER_OWNER`` bots opted in (whatever their status) until one is opted out
    (409). Opting out is always allowed.
    """
    if not isinstance(enabled, bool):
        raise TypeError("enabled must be a bool")
    if bot.ladder_opt_in != enabled:
        if enabled:
            if not User.objects.filter(email_confirmed_q(), pk=bot.owner_id).exists():
                raise PermissionDeniedError(CONFIRM_EMAIL, field="ladder_opt_in")
            _check_room_for_another(bot)
        bot.ladder_opt_in = enabled
        bot.save(update_fields=["ladder_opt_in", "updated_at"])
        if enabled:
            shares_seat([bot.pk])
            ladders_top_up_soon()
    return bot


def _check_room_for_another(bot: Bot) -> None:
    # The owner's row is locked so that two opt-ins at once cannot both pass the count.
    User.objects.select_for_update().only("pk").get(pk=bot.owner_id)
    cap = settings.LADDER_MAX_BOTS_PER_OWNER
    opted = Bot.objects.filter(owner_id=bot.owner_id, ladder_opt_in=True).exclude(pk=bot.pk).count()
    if opted >= cap:
        raise ConflictError(
            f"an account may have at most {cap} bots on the ladders and {opted} of yours are; "
            "opt one of them out first",
            field="ladder_opt_in",
        )


@transaction.atomic
def ladder_create(
    *,
    variant: Variant,
    table_size: int = 4,
    time_limit_ms: int | None = None,
    time_bank_ms: int = DEFAULT_TIME_BANK_MS,
    duplicate: bool = False,
    round_tables: int = ROUND_TABLES,
) -> Ladder:
    """Switch a variant's ladder on; 409 when the variant already has one.

    Its tables are dealt independently unless ``duplicate`` (see ``Ladder``: only for bots
    whose code is trusted, since duplicate groups replay the same deals), and rated in rounds
    of up to ``round_tables`` tables.
    """
    check_table(variant, table_size)
    if Ladder.objects.filter(variant=variant).exists():
        raise ConflictError(
            f"the variant {variant.name} already has a ladder",
            field="variant",
        )
    ladder = Ladder(
        variant=variant,
        table_size=table_size,
        time_limit_ms=time_limit_ms or settings.BOT_DEFAULT_TIME_LIMIT_MS,
        time_bank_ms=time_bank_ms,
        duplicate=duplicate,
        round_tables=round_tables,
    )
    ladder.full_clean(exclude=["variant"])
    ladder.save()
    ladders_top_up_soon()
    return ladder


# What staff may change on a ladder; its variant is the ladder's identity.
LADDER_EDITABLE = ("table_size", "time_limit_ms", "time_bank_ms", "duplicate", "round_tables")
# Changes that make a new table unlike the current round's.
NEW_ROUND_ON = {"table_size", "duplicate", "round_tables"}


@transaction.atomic
def ladder_update(*, ladder: Ladder, data: dict[str, Any]) -> Ladder:
    """Change how the ladder makes its next tables; open tables play as they were made.

    A change of the table size, of duplicate or of the round size starts a new round, so no
    round mixes tables made under two definitions.
    """
    locked = Ladder.objects.select_for_update().select_related("variant").get(pk=ladder.pk)
    changed = [f for f in LADDER_EDITABLE if f in data and data[f] != getattr(locked, f)]
    if not changed:
        return locked
    for field in changed:
        setattr(locked, field, data[field])
    check_table(locked.variant, locked.table_size)
    locked.full_clean(exclude=["variant"])
    if NEW_ROUND_ON & set(changed):
        locked.current_round = ""
        changed.append("current_round")
    locked.save(update_fields=[*changed, "updated_at"])
    ladders_top_up_soon()
    return locked


def ladder_ensure_default() -> Ladder | None:
    """Make sure the oh-hell preset has its ladder (it runs by default); idempotent."""
    variant = Variant.objects.filter(name=DEFAULT_LADDER_VARIANT).first()
    if variant is None:
        return None
    ladder, _ = Ladder.objects.get_or_create(variant=variant)
    return ladder


@transaction.atomic
def ladder_pause(*, ladder: Ladder) -> Ladder:
    """Stop the ladder: no new tables, queued matches wait; playing ones finish."""
    return competition_move(ladder, {LadderStatus.RUNNING}, LadderStatus.PAUSED)


@transaction.atomic
def ladder_resume(*, ladder: Ladder) -> Ladder:
    """Run a paused ladder again: its waiting matches are sent and it is topped up."""
    ladder = competition_move(ladder, {LadderStatus.PAUSED}, LadderStatus.RUNNING)
    for match in _sendable(ladder):
        match_enqueue(match=match)
    ladders_top_up_soon()
    return ladder


def _sendable(ladder: Ladder) -> list[Match]:
    """Queued matches that may be claimed now: singles, and each group's earliest rotation."""
    queued = Match.objects.filter(ladder=ladder, status=MatchStatus.QUEUED).order_by("pk")
    busy_groups = set(
        Match.objects.filter(ladder=ladder, status=MatchStatus.RUNNING)
        .exclude(duplicate_group="")
        .values_list("duplicate_group", flat=True)
    )
    sendable = []
    for match in queued.only("pk", "ladder_id", "duplicate_group"):
        if match.duplicate_group:
            if match.duplicate_group in busy_groups:
                continue
            busy_groups.add(match.duplicate_group)
        sendable.append(match)
    return sendable


def ladders_top_up() -> int:
    """Top every running ladder up to its tables in flight; return how many matches were made.

    One transaction holds every running ladder's row, so two top-ups never seat a bot twice.
    """
    made = 0
    with transaction.atomic():
        ladders = lock_running_ladders()
        _drop_unplayable()
        for ladder in ladders:
            made += _top_up(ladder)
    return made


def lock_running_ladders() -> list[Ladder]:
    """Every running ladder, its row locked until the transaction ends, with its variant.

    Only the ladders' rows: a rating write checks its rows' variant at commit (a key-share
    lock) while it holds the shares whose weights it rewrote, which a top-up waits for, so a
    top-up that locked the variant too would deadlock with it
    (tests/tournaments/services/test_ladder_locks.py).
    """
    return list(
        Ladder.objects.select_for_update(of=("self",))
        .filter(status=LadderStatus.RUNNING)
        .select_related("variant")
        .order_by("pk")
    )


def _drop_unplayable() -> None:
    """Cancel queued ladder tables that seat a bot the ladders may no longer seat."""
    gone = MatchSeat.objects.filter(
        match__ladder__isnull=False, match__status=MatchStatus.QUEUED
    ).exclude(bot__in=playable_bots())
    match_ids = set(gone.values_list("match_id", flat=True))
    if not match_ids:
        return
    groups = set(
        Match.objects.filter(pk__in=match_ids)
        .exclude(duplicate_group="")
        .values_list("ladder_id", "duplicate_group")
    )
    for ladder_id, group in groups:
        match_ids.update(
            Match.objects.filter(
                ladder_id=ladder_id, duplicate_group=group, status=MatchStatus.QUEUED
            ).values_list("pk", flat=True)
        )
    shares_take_out_cancelled(match_ids)
    Match.objects.filter(pk__in=match_ids, status=MatchStatus.QUEUED).update(
        status=MatchStatus.CANCELLED, updated_at=timezone.now()
    )


def _tables_in_flight(ladder: Ladder) -> int:
    open_matches = Match.objects.filter(ladder=ladder, status__in=OPEN)
    return len(
        {group or f"#{pk}" for pk, group in open_matches.values_list("pk", "duplicate_group")}
    )


def _top_up(ladder: Ladder) -> int:
    """Seat the tables the ladder is short of, from its slate of free bots; bots seated here
    are at open ladder tables, so the next ladder's slate leaves them out."""
    shares_move_window(ladder, now=timezone.now())
    wanted = settings.LADDER_MATCHES_IN_FLIGHT - _tables_in_flight(ladder)
    if wanted <= 0:
        return 0
    params = MatchmakingParams()
    size = slate_size(ladder.table_size, wanted, settings.LADDER_SLATE_BOTS)
    field = ladder_slate(ladder=ladder, size=size)
    candidates = _candidates(ladder, field)
    quota = _owner_quota(field)
    rng = random.Random(secrets.randbits(64))
    tables = pick_tables(candidates, ladder.table_size, wanted, rng, params, quota=quota)
    fixtures = []
    for seats, table_round in zip(tables, round_keys(ladder=ladder, tables=tables), strict=True):
        seed = new_seed()
        if ladder.duplicate:
            group = f"ladder-{ladder.pk}-{secrets.token_hex(8)}"
            fixtures += [
                Fixture(round=0, table=turn, seats=rotated, seed=seed, duplicate_group=group)
                for turn, rotated in enumerate(rotations(seats))
            ]
        else:
            fixtures.append(
                Fixture(round=0, table=0, seats=seats, seed=seed, table_round=table_round)
            )
    matches_create(fixtures=fixtures, competition=ladder)
    shares_add_tables(ladder, [f.seats for f in fixtures])
    return len(fixtures)


def round_keys(*, ladder: Ladder, tables: list[tuple[int, ...]]) -> list[str]:
    """The round each new table joins, in order, and the ladder's current round saved; "" for
    each table of a ladder that rates its tables alone (``round_tables`` 1, or duplicate).

    A table joins the current round while the round has fewer than ``round_tables`` tables,
    none of them has ended and it shares no team key with them; otherwise it opens a new
    round. A bot at an open ladder table is never seated again, so none is at two of a round.
    """
    if ladder.duplicate or ladder.round_tables <= 1 or not tables:
        return [""] * len(tables)
    key, size, members = ladder.current_round, 0, set()
    if key:
        rows = list(
            MatchSeat.objects.filter(match__ladder=ladder, match__table_round=key).values_list(
                "match_id", "match__status", "bot_id"
            )
        )
        if all(status in OPEN for _, status, _ in rows):
            size, members = len({match_id for match_id, _, _ in rows}), {b for *_, b in rows}
        else:
            key = ""
    teams = bot_teams(bot_ids=members | {bot for seats in tables for bot in seats})
    taken = {team for bot in members for team in teams.get(bot, ())}
    keys = []
    for seats in tables:
        joining = {team for bot in seats for team in teams.get(bot, ())}
        if not key or size >= ladder.round_tables or joining & taken:
            key, size, taken = f"round-{secrets.token_hex(8)}", 0, set()
        keys.append(key)
        size += 1
        taken |= joining
    if key != ladder.current_round:
        ladder.current_round = key
        ladder.save(update_fields=["current_round", "updated_at"])
    return keys


def _owner_quota(field: list[FieldBot]) -> dict[str, int]:
    """How many more of the ladder's tables each owner of the slate's bots may sit at now."""
    cap = settings.LADDER_MAX_TABLES_PER_OWNER
    return {owner_team(bot.owner_id): max(cap - bot.owner_tables, 0) for bot in field}


def _candidates(ladder: Ladder, eligible: list[FieldBot]) -> list[Candidate]:
    """The slate's bots with their teams, ratings and ladder tables of the window."""
    if len(eligible) < ladder.table_size:
        return []
    shared = shared_hosts()
    start = RatingParams.from_dict(ladder.variant.rating_params)
    return [
        Candidate(
            id=bot.id,
            mu=start.mu if bot.mu is None else bot.mu,
            sigma=start.sigma if bot.sigma is None else bot.sigma,
            provisional=is_provisional(bot.matches),
            recent=bot.tables,
            seats=bot.seats,
            teams=team_keys(bot.owner_id, bot.endpoint_addresses, shared),
        )
        for bot in eligible
    ]
