"""A ladder's shares, kept as tables are made, cancelled and leave the window, always equal the
count of the window's tables afresh (``shares_rebuild``); their weights follow the ratings, and
every opted-in bot has one."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from tournaments.formats.matchmaking import MatchmakingParams, weight_of
from tournaments.maths.ratings import RatingParams
from tournaments.models import (
    Bot,
    BotStatus,
    DisabledCause,
    Ladder,
    LadderShare,
    Match,
    MatchStatus,
    Rating,
)
from tournaments.provisional import is_provisional
from tournaments.selectors.ladders import SHARE_WINDOW_STEP, ladder_slate
from tournaments.services.bots import HelloResult, bot_record_check
from tournaments.services.ladders import bot_set_ladder_opt_in, ladders_top_up
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.recompute import ratings_recompute
from tournaments.services.shares import shares_rebuild
from tournaments.services.users import email_confirmation_key, user_confirm_email

pytestmark = pytest.mark.django_db


def shares(ladder: Ladder) -> dict[int, tuple[int, list[int]]]:
    """Each bot's tables and tables by seat, trailing zeros and empty rows left out."""
    found = {}
    for share in LadderShare.objects.filter(ladder=ladder):
        seats = list(share.seats)
        while seats and seats[-1] == 0:
            seats.pop()
        if share.tables:
            found[share.bot_id] = (share.tables, seats)
    return found


def pass_hours(ladder: Ladder, hours: float) -> None:
    """Move every table and the ladder's counted window back in time, as if time had passed."""
    back = timedelta(hours=hours)
    Match.objects.filter(ladder=ladder).update(created_at=F("created_at") - back)
    Ladder.objects.filter(pk=ladder.pk).update(shares_since=F("shares_since") - back)


def finish_some(ladder: Ladder, n: int) -> None:
    ids = list(
        Match.objects.filter(ladder=ladder, status=MatchStatus.QUEUED).values_list("pk", flat=True)
    )[:n]
    Match.objects.filter(pk__in=ids).update(status=MatchStatus.FINISHED, finished_at=timezone.now())


def test_kept_shares_equal_a_fresh_count_through_tables_cancels_and_time(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 3
    bots = ladder_bots(14)
    for hours in (0, 20, 20, 10):
        pass_hours(ladder, hours)
        for _ in range(6):
            ladders_top_up()
            finish_some(ladder, 2)
        # A bot opted out leaves: its queued table is cancelled and counts no more.
        leaving = Match.objects.filter(ladder=ladder, status=MatchStatus.QUEUED).first()
        if leaving is not None:
            bot = leaving.seats.get(seat=0).bot
            bot_set_ladder_opt_in(bot=bot, enabled=False)
            ladders_top_up()
            assert Match.objects.get(pk=leaving.pk).status == MatchStatus.CANCELLED
            bot_set_ladder_opt_in(bot=bot, enabled=True)
    ladder.refresh_from_db()
    kept = shares(ladder)
    assert Match.objects.filter(ladder=ladder, status=MatchStatus.CANCELLED).exists()
    assert Match.objects.filter(
        ladder=ladder, created_at__lt=timezone.now() - timedelta(days=1)
    ).exists()  # some tables left the window
    shares_rebuild(ladder, now=ladder.shares_since + timedelta(days=1))
    assert kept == shares(ladder)
    assert sum(tables for tables, _ in kept.values()) > 0
    assert len(bots) >= len(kept)


def weights(ladder: Ladder) -> dict[int, float]:
    return dict(LadderShare.objects.filter(ladder=ladder).values_list("bot_id", "weight"))


def expected_weight(ladder: Ladder, bot_id: int) -> float:
    """``share_weight`` of the matchmaker for the bot's rating in the ladder's variant now."""
    rating = Rating.objects.filter(bot_id=bot_id, variant=ladder.variant).first()
    start = RatingParams.from_dict(ladder.variant.rating_params)
    sigma, matches = (rating.sigma, rating.matches) if rating else (start.sigma, 0)
    return weight_of(sigma, is_provisional(matches), MatchmakingParams())


def test_share_weights_follow_every_rating_write_and_a_recompute(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 2
    ladder_bots(8)
    ladders_top_up()
    start = weights(ladder)
    assert len(start) == 8 and len(set(start.values())) == 1  # all unrated: one weight
    for round_ in range(3):
        for match in Match.objects.filter(ladder=ladder, status=MatchStatus.QUEUED):
            seats = list(match.seats.order_by("seat"))
            for seat in seats:
                seat.score = 10 * ((seat.seat + round_) % 4)
                seat.save(update_fields=["score"])
            Match.objects.filter(pk=match.pk).update(
                status=MatchStatus.FINISHED, finished_at=timezone.now()
            )
        assert ratings_apply_pending() > 0
        kept = weights(ladder)
        assert kept == pytest.approx({b: expected_weight(ladder, b) for b in kept}, abs=1e-12)
        ladders_top_up()
    assert kept != start  # ratings moved and the weights with them
    Rating.objects.filter(variant=ladder.variant).update(sigma=F("sigma") * 2)
    ratings_recompute()  # every rating written anew, and every weight with it
    kept = weights(ladder)
    assert kept == pytest.approx({b: expected_weight(ladder, b) for b in kept}, abs=1e-12)


def test_a_bot_opted_in_after_the_shares_were_counted_is_on_the_next_slate(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    ladder_bots(4)
    ladders_top_up()  # counts the shares
    (late,) = ladder_bots(1, ladder_opt_in=False)
    bot_set_ladder_opt_in(bot=late, enabled=True)
    assert LadderShare.objects.filter(ladder=ladder, bot=late, tables=0).exists()
    assert late.pk in {bot.id for bot in ladder_slate(ladder=ladder, size=100)}


def test_a_bot_opted_in_by_another_path_gets_its_share_within_a_step_of_the_window(
    ladder, ladder_bots, settings
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    ladder_bots(4)
    ladders_top_up()
    (other,) = ladder_bots(1, ladder_opt_in=False)
    Bot.objects.filter(pk=other.pk).update(ladder_opt_in=True)  # as a script in the shell would
    ladders_top_up()
    assert not LadderShare.objects.filter(ladder=ladder, bot=other).exists()  # within the step
    move_window_a_step(ladder)
    ladders_top_up()
    assert LadderShare.objects.filter(ladder=ladder, bot=other, tables=0).exists()
    assert other.pk in {bot.id for bot in ladder_slate(ladder=ladder, size=100)}


def parked(ladder: Ladder) -> set[int]:
    return set(
        LadderShare.objects.filter(ladder=ladder, parked=True).values_list("bot_id", flat=True)
    )


def move_window_a_step(ladder: Ladder) -> None:
    Ladder.objects.filter(pk=ladder.pk).update(shares_since=F("shares_since") - SHARE_WINDOW_STEP)


def test_the_window_parks_the_shares_of_bots_that_cannot_play_until_they_can_again(
    ladder, ladder_bots, settings, loopback_allowed, django_capture_on_commit_callbacks
) -> None:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    settings.LADDER_SLATE_BOTS = 1
    bots = ladder_bots(8, endpoint_url="http://127.0.0.1:9/play")
    ladders_top_up()
    opted_out, disabled, moved = bots[5], bots[6], bots[7]
    bot_set_ladder_opt_in(bot=opted_out, enabled=False)
    Bot.objects.filter(pk=disabled.pk).update(
        status=BotStatus.DISABLED, disabled_cause=DisabledCause.HEALTH
    )
    moved.owner.email = "elsewhere@example.org"
    moved.owner.save(update_fields=["email"])
    ladders_top_up()
    assert parked(ladder) == set()  # within the step: the slate's own checks keep them out
    move_window_a_step(ladder)
    ladders_top_up()
    assert parked(ladder) == {opted_out.pk, disabled.pk, moved.pk}
    # Whatever lets each play again brings its share back as soon as it commits.
    bot_set_ladder_opt_in(bot=opted_out, enabled=True)
    with django_capture_on_commit_callbacks(execute=True):
        bot_record_check(bot=disabled, result=HelloResult(ok=True, latency_ms=5))
    assert Bot.objects.get(pk=disabled.pk).status == BotStatus.ACTIVE
    assert parked(ladder) == {moved.pk}
    user_confirm_email(key=email_confirmation_key(moved.owner))
    assert parked(ladder) == set()
