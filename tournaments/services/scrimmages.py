"""Scrimmages: an owner asks for unrated matches of their bot against opponents they chose.

Opponents are the reference players (each one house bot, ``reference_bot``, played in-process
by the worker), the owner's other bots, and other owners' bots whose owners accept scrimmages
(``Bot.accepts_scrimmages``). The matches are queued on the scrimmage queue at once
(``match_create``), so the web tier never waits on a bot. An account asks for at most
``SCRIMMAGE_MATCHES_PER_DAY`` matches in a UTC day (``QuotaExceededError``, a 429), and only
once its email address is confirmed, as for the ladders. What made the scrimmage allowed is read
again as each match is claimed (tournaments/services/scrimmage_lane.py), and its owner may cancel
it (``scrimmage_cancel``).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone

from arena.timebank import DEFAULT_TIME_BANK_MS, MAX_TIME_BANK_MS
from engine.dealing import MAX_SEED
from engine.errors import InvalidVariantError
from tournaments.errors import (
    ApplicationError,
    ConflictError,
    PermissionDeniedError,
    QuotaExceededError,
)
from tournaments.models import (
    Bot,
    BotStatus,
    MatchStatus,
    ReferencePlayer,
    Scrimmage,
    ScrimmageOpponent,
    Variant,
    is_email_confirmed,
)
from tournaments.seeds import new_seed, scrimmage_deal_seed
from tournaments.services.matches import match_create
from tournaments.services.scrimmage_lane import scrimmage_cancel_open

# The account that owns the reference players' house bots. Its name has a space, which no
# sign-up accepts (``USERNAME_VALIDATOR`` in tournaments/services/users.py), so no person can
# hold it; nor can anyone sign in to it (no usable password).
HOUSE_USERNAME = "reference players"


def reference_bot(player: ReferencePlayer) -> Bot:
    """The house bot of a reference player, made the first time it is asked for.

    Its name has a ':', which no registered bot's may have (``BOT_NAME_VALIDATOR``), so it never
    clashes with one; it calls no endpoint, is never health-checked, and accepts no invitations.
    """
    bot = Bot.objects.filter(reference_player=player).first()
    if bot is not None:
        return bot
    owner, created = User.objects.get_or_create(username=HOUSE_USERNAME)
    if created:
        owner.set_unusable_password()
        owner.save(update_fields=["password"])
    try:
        with transaction.atomic():
            return Bot.objects.create(
                owner=owner,
                name=f"reference:{player}",
                description=f"The {player} reference player, for scrimmages.",
                endpoint_url="",
                secret=secrets.token_hex(32),
                status=BotStatus.ACTIVE,
                reference_player=player,
            )
    except IntegrityError:  # made at the same moment by another request
        return Bot.objects.get(reference_player=player)


@dataclass(frozen=True)
class ScrimmageRequest:
    """What an owner asks for: their bot, its opponents, the variant and the series."""

    bot_id: int
    variant: Variant
    matches: int
    opponent_ids: Sequence[int] = ()
    reference_players: Sequence[str] = ()
    seed: int | None = None
    time_limit_ms: int | None = None
    time_bank_ms: int = DEFAULT_TIME_BANK_MS


CONFIRM_EMAIL = (
    "Confirm your email address first: scrimmages, like the ladders, are played only by accounts "
    "that confirmed theirs (the link is mailed when you sign up or change it)."
)


def _own_bot(owner: User, bot_id: int) -> Bot:
    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        raise ApplicationError(f"There is no bot {bot_id}.", field="bot")
    if bot.owner_id != owner.pk:
        raise ApplicationError(f"Bot {bot.name} is not yours.", field="bot")
    if not bot.is_playable:
        raise ApplicationError(
            f"Bot {bot.name} is {bot.get_status_display()}: it plays once it is active.",
            field="bot",
        )
    return bot


def _opponents(owner: User, bot: Bot, ids: Sequence[int]) -> list[Bot]:
    """The chosen bots, in order; refused naming ``opponents`` when one may not be played."""
    if len(set(ids)) != len(ids):
        raise ApplicationError("An opponent is listed twice.", field="opponents")
    found = {b.pk: b for b in Bot.objects.filter(pk__in=ids)}
    chosen = []
    for bot_id in ids:
        opponent = found.get(bot_id)
        if opponent is None:
            raise ApplicationError(f"There is no bot {bot_id}.", field="opponents")
        if opponent.pk == bot.pk:
            raise ApplicationError(f"Bot {bot.name} cannot be its own opponent.", field="opponents")
        mine = opponent.owner_id == owner.pk
        if not (mine or opponent.reference_player or opponent.accepts_scrimmages):
            raise ApplicationError(
                f"The owner of {opponent.name} does not accept scrimmages.", field="opponents"
            )
        if not opponent.is_playable:
            raise ApplicationError(
                f"Bot {opponent.name} is {opponent.get_status_display()}, so it cannot play.",
                field="opponents",
            )
        chosen.append(opponent)
    return chosen


def _references(names: Sequence[str]) -> list[Bot]:
    if len(set(names)) != len(names):
        raise ApplicationError("A reference player is listed twice.", field="reference_players")
    for name in names:
        if name not in ReferencePlayer.values:
            choices = ", ".join(ReferencePlayer.values)
            raise ApplicationError(
                f"No reference player {name!r}; choose from {choices}.",
                field="reference_players",
            )
    return [reference_bot(ReferencePlayer(name)) for name in names]


def next_utc_day(now: datetime) -> datetime:
    """The start of the UTC day after ``now``'s: when a day's quota is given back."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


def matches_asked_today(owner: User, now: datetime) -> int:
    """The matches the account's scrimmages asked for since the start of ``now``'s UTC day."""
    start = next_utc_day(now) - timedelta(days=1)
    asked = Scrimmage.objects.filter(owner=owner, created_at__gte=start).aggregate(
        n=Sum("match_count")
    )
    return int(asked["n"] or 0)


def _check_quota(owner: User, matches: int) -> None:
    """Refuse a scrimmage past the day's quota; the owner's row is locked, so two requests at
    once cannot both pass."""
    User.objects.select_for_update().filter(pk=owner.pk).first()
    now = timezone.now()
    per_day = settings.SCRIMMAGE_MATCHES_PER_DAY
    used = matches_asked_today(owner, now)
    if used + matches > per_day:
        wait = max(1, int((next_utc_day(now) - now).total_seconds()) + 1)
        raise QuotaExceededError(
            f"An account may ask for {per_day} scrimmage matches a day (UTC); it has asked for "
            f"{used} today, so {max(0, per_day - used)} more may be asked for until the day ends.",
            field="matches",
            retry_after=wait,
            extra={"per_day": per_day, "used": used},
        )


def _check_series(request: ScrimmageRequest) -> None:
    most = settings.SCRIMMAGE_MAX_MATCHES
    if not 1 <= request.matches <= most:
        raise ApplicationError(
            f"A scrimmage has from 1 to {most} matches.", field="matches", extra={"max": most}
        )
    if request.seed is not None and not 0 <= request.seed <= MAX_SEED:
        raise ApplicationError(f"A seed is an integer from 0 to {MAX_SEED}.", field="seed")
    limit = request.time_limit_ms
    if limit is not None and not 10 <= limit <= 120_000:
        raise ApplicationError(
            "The time limit is from 10 to 120000 milliseconds.", field="time_limit_ms"
        )
    if not 0 <= request.time_bank_ms <= MAX_TIME_BANK_MS:
        raise ApplicationError(
            f"The time bank is from 0 to {MAX_TIME_BANK_MS} milliseconds.", field="time_bank_ms"
        )


def scrimmage_create(*, owner: User, request: ScrimmageRequest) -> Scrimmage:
    """Make the scrimmage and queue its matches on the scrimmage queue; refused naming the field
    at fault, or with ``QuotaExceededError`` past the day's quota.

    Match ``i`` seats the owner's bot and its opponents rotated by ``i`` places, so the bot
    plays from every seat in turn.
    """
    if not is_email_confirmed(owner):
        raise PermissionDeniedError(CONFIRM_EMAIL)
    _check_series(request)
    bot = _own_bot(owner, request.bot_id)
    opponents = _opponents(owner, bot, list(request.opponent_ids))
    opponents += _references(list(request.reference_players))
    if not opponents:
        raise ApplicationError("Choose at least one opponent.", field="opponents")
    try:
        request.variant.to_engine().check_players(1 + len(opponents))
    except InvalidVariantError as exc:
        raise ApplicationError(
            f"{1 + len(opponents)} seats: {exc.reason}", field="opponents"
        ) from None
    time_limit = request.time_limit_ms or settings.BOT_DEFAULT_TIME_LIMIT_MS
    table = [bot.pk, *(o.pk for o in opponents)]
    with transaction.atomic():
        _check_quota(owner, request.matches)
        scrimmage = Scrimmage.objects.create(
            owner=owner,
            bot=bot,
            variant=request.variant,
            match_count=request.matches,
            seed=request.seed,
            time_limit_ms=time_limit,
            time_bank_ms=request.time_bank_ms,
        )
        ScrimmageOpponent.objects.bulk_create(
            ScrimmageOpponent(scrimmage=scrimmage, bot=o, position=i)
            for i, o in enumerate(opponents)
        )
        for number in range(request.matches):
            turn = number % len(table)
            match_create(
                variant_id=request.variant.pk,
                bot_ids=table[turn:] + table[:turn],
                seed=new_seed()
                if request.seed is None
                else scrimmage_deal_seed(request.seed, number),
                time_limit_ms=time_limit,
                time_bank_ms=request.time_bank_ms,
                scrimmage=scrimmage,
                round=number,
            )
    return scrimmage


@transaction.atomic
def scrimmage_cancel(*, scrimmage: Scrimmage, by: User) -> Scrimmage:
    """Cancel a scrimmage its owner (or staff) asked for: its matches not yet ended are
    cancelled, a running one cut where it waits. One whose matches have all ended is refused
    with ``ConflictError``."""
    locked = Scrimmage.objects.select_for_update().get(pk=scrimmage.pk)
    if locked.owner_id != by.pk and not by.is_staff:
        raise PermissionDeniedError("Only its owner may cancel a scrimmage.")
    if locked.cancelled_at is not None:
        raise ConflictError(f"Scrimmage {locked.pk} is cancelled already.")
    if not locked.matches.filter(status__in=(MatchStatus.QUEUED, MatchStatus.RUNNING)).exists():
        raise ConflictError(f"Scrimmage {locked.pk} has finished: every match has ended.")
    who = "its owner" if locked.owner_id == by.pk else "staff"
    scrimmage_cancel_open(scrimmage_id=locked.pk, reason=f"cancelled by {who}")
    locked.refresh_from_db()
    return locked
