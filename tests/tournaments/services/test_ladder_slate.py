"""A top-up's slate: the free bots the ladders may seat, furthest behind their share first, read
in one SQL statement, is the ORM's rule (``playable_bots``, the per-owner cap, busy bots) and the
matchmaker's ``owed`` order over the window's tables, whatever the field's size."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.users import make_confirmed_user, make_user
from tournaments.formats.matchmaking import Candidate, MatchmakingParams, owed
from tournaments.maths.ratings import RatingParams
from tournaments.models import (
    Bot,
    BotStatus,
    Ladder,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
)
from tournaments.provisional import is_provisional
from tournaments.selectors.ladders import SHARE_WINDOW, ladder_slate, playable_bots
from tournaments.services.ladders import ladders_top_up
from tournaments.services.matches import match_create
from tournaments.services.shares import shares_rebuild

pytestmark = pytest.mark.django_db
PARAMS = MatchmakingParams()


def _table(ladder: Ladder, bots: list[Bot], status: str, *, days_ago: float = 0) -> Match:
    ended = timezone.now() if status == MatchStatus.FINISHED else None
    match = Match.objects.create(
        ladder=ladder, variant=ladder.variant, status=status, finished_at=ended
    )
    Match.objects.filter(pk=match.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    for seat, bot in enumerate(bots):
        MatchSeat.objects.create(match=match, seat=seat, bot=bot)
    return match


def _expected_owed(ladder: Ladder, bot: Bot) -> float:
    """``owed`` of a bot from the ORM: its rating and its ladder tables of the last day."""
    start = RatingParams.from_dict(ladder.variant.rating_params)
    rating = Rating.objects.filter(bot=bot, variant=ladder.variant).first()
    recent = (
        MatchSeat.objects.filter(
            bot=bot, match__ladder=ladder, match__created_at__gte=timezone.now() - SHARE_WINDOW
        )
        .exclude(match__status=MatchStatus.CANCELLED)
        .count()
    )
    candidate = Candidate(
        id=bot.pk,
        mu=rating.mu if rating else start.mu,
        sigma=rating.sigma if rating else start.sigma,
        provisional=is_provisional(rating.matches if rating else 0),
        recent=recent,
    )
    return owed(candidate, PARAMS)


@pytest.fixture
def field(ladder, ladder_bots, settings, short_variant):
    """Bots of every kind the rule tells apart, and the ones it lets play."""
    settings.LADDER_MAX_BOTS_PER_OWNER = 3
    free = ladder_bots(8)
    capped = ladder_bots(5, owner=make_confirmed_user("many-bots"))  # the first 3 by id play
    unconfirmed = ladder_bots(2, owner=make_user("unconfirmed", email="u@example.org"))
    moved = make_confirmed_user("moved-address")
    moved_bots = ladder_bots(1, owner=moved)
    moved.email = "elsewhere@example.org"
    moved.save(update_fields=["email"])
    pending = ladder_bots(1, status=BotStatus.PENDING)
    not_opted = ladder_bots(1, ladder_opt_in=False)
    at_table = ladder_bots(4)
    _table(ladder, at_table, MatchStatus.QUEUED)
    playing = ladder_bots(3)
    elsewhere = match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in playing], seed=1, time_limit_ms=100
    )
    Match.objects.filter(pk=elsewhere.pk).update(status=MatchStatus.RUNNING)
    waiting = ladder_bots(3)  # queued for a tournament match: free for the ladders meanwhile
    match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in waiting], seed=2, time_limit_ms=100
    )
    # The last day's tables and ratings that set who is owed most.
    _table(ladder, free[:4], MatchStatus.FINISHED)
    _table(ladder, free[:2] + capped[:2], MatchStatus.FINISHED)
    _table(ladder, free[4:8], MatchStatus.FINISHED, days_ago=2)  # outside the window
    _table(ladder, free[2:6], MatchStatus.CANCELLED)  # never played
    for i, bot in enumerate(free):
        Rating.objects.create(
            bot=bot, variant=ladder.variant, mu=20 + i, sigma=1 + i * 0.7, matches=i * 3
        )
    shares_rebuild(ladder, now=timezone.now())  # what a ladder's first top-up counts
    plays = [*free, *capped[:3], *waiting]
    others = [*capped[3:], *unconfirmed, *moved_bots, *pending, *not_opted, *at_table, *playing]
    return plays, others


def test_the_slate_holds_exactly_the_bots_the_ladders_may_seat_now(ladder, field) -> None:
    plays, others = field
    slate = ladder_slate(ladder=ladder, size=1000)
    assert {bot.id for bot in slate} == {bot.pk for bot in plays}
    playable = set(playable_bots().values_list("pk", flat=True))
    assert {bot.id for bot in slate} <= playable
    assert not {bot.id for bot in slate} & {bot.pk for bot in others}


def test_the_slate_comes_furthest_behind_its_share_first_as_the_matchmaker_counts(
    ladder, field
) -> None:
    plays, _ = field
    slate = ladder_slate(ladder=ladder, size=1000)
    by_id = {bot.pk: bot for bot in plays}
    dues = [_expected_owed(ladder, by_id[bot.id]) for bot in slate]
    assert dues == sorted(dues)
    assert len(set(dues)) > 5  # the field tells its bots apart
    recent = {bot.id: bot.tables for bot in slate}
    assert recent[plays[0].pk] == 2 and recent[plays[4].pk] == 0  # window and cancels kept out
    # A short slate is the front of that order.
    front = ladder_slate(ladder=ladder, size=3)
    assert [_expected_owed(ladder, by_id[bot.id]) for bot in front] == dues[:3]


def test_a_top_up_on_a_field_larger_than_its_slate_seats_those_owed_most(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_SLATE_BOTS = 16
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    bots = ladder_bots(40)
    for start in range(0, 36, 4):  # every bot but the last four played in the last day
        _table(ladder, bots[start : start + 4], MatchStatus.FINISHED)
    assert ladders_top_up() == 1
    newest = Match.objects.filter(ladder=ladder, status=MatchStatus.QUEUED).get()
    seated = set(newest.seats.values_list("bot_id", flat=True))
    assert seated & {b.pk for b in bots[36:]}  # the seed is one of the four owed most
