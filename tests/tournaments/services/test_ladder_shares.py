"""A ladder's shares, kept as tables are made, cancelled and leave the window, always equal the
count of the window's tables afresh (``shares_rebuild``)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from tournaments.models import Ladder, LadderShare, Match, MatchStatus
from tournaments.services.ladders import bot_set_ladder_opt_in, ladders_top_up
from tournaments.services.shares import shares_rebuild

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
):
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
