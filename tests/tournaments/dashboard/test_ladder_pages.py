"""The ladders on the dashboard: the home page's live activity, and a ladder match's page."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.support.world import World, make_bots
from tournaments.models import (
    Bot,
    Ladder,
    LadderStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Variant,
)
from tournaments.selectors.ladders import ACTIVITY_WINDOW, ladders_activity

pytestmark = pytest.mark.django_db


def ladder_match(
    ladder: Ladder,
    bots: list[Bot],
    status: MatchStatus,
    *,
    queued: datetime,
    finished: datetime | None = None,
) -> Match:
    """A match of the ladder, queued and (when given) finished at the given times."""
    match = Match.objects.create(
        ladder=ladder, variant=ladder.variant, status=status, finished_at=finished
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=match, seat=i, bot=bot) for i, bot in enumerate(bots)
    )
    started = queued + timedelta(seconds=5) if status != MatchStatus.QUEUED else None
    Match.objects.filter(pk=match.pk).update(created_at=queued, started_at=started)
    return match


def ladders_section(body: str) -> str:
    return body.split('<section id="ladders">')[1].split("</section>")[0]


def test_the_home_page_shows_each_running_ladders_tables_recent_matches_and_last_finish(
    client, world: World
) -> None:
    now = timezone.now()
    ladder, _ = Ladder.objects.get_or_create(variant=world.variant)
    paused = Ladder.objects.create(
        variant=Variant.objects.get(name="blackout"), status=LadderStatus.PAUSED
    )
    bots = world.bots[:4]
    for _ in range(2):
        ladder_match(ladder, bots, MatchStatus.RUNNING, queued=now - timedelta(minutes=1))
    ladder_match(ladder, bots, MatchStatus.QUEUED, queued=now)
    last = now - timedelta(minutes=7)
    for finished in (now - timedelta(minutes=50), now - timedelta(minutes=20), last):
        ladder_match(
            ladder,
            bots,
            MatchStatus.FINISHED,
            queued=finished - timedelta(minutes=2),
            finished=finished,
        )
    # Finished before the window: not counted; a failed one is not a finished match.
    ladder_match(
        ladder,
        bots,
        MatchStatus.FINISHED,
        queued=now - ACTIVITY_WINDOW - timedelta(minutes=10),
        finished=now - ACTIVITY_WINDOW - timedelta(minutes=5),
    )
    ladder_match(ladder, bots, MatchStatus.FAILED, queued=now - timedelta(minutes=3))
    ladder_match(paused, bots, MatchStatus.RUNNING, queued=now)

    [row] = ladders_activity(now=now)
    assert row.ladder == ladder
    assert (row.tables_playing, row.finished_in_window) == (2, 3)
    assert row.last_finished_at is not None
    assert abs((row.last_finished_at - last).total_seconds()) < 1

    section = ladders_section(client.get("/").content.decode())
    assert f'href="/leaderboard/{world.variant.name}/"' in section
    assert "blackout" not in section
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", section)]
    assert cells == [world.variant.name, "2 tables", "3 matches", "7\xa0minutes ago"]


def test_a_running_ladder_without_recent_play_says_so_and_none_running_says_that(client) -> None:
    Ladder.objects.get_or_create(variant=Variant.objects.get(name="oh-hell"))
    section = ladders_section(client.get("/").content.decode())
    assert "0 tables" in section and "0 matches" in section
    assert "none in the last 60 min" in section
    Ladder.objects.update(status=LadderStatus.PAUSED)
    assert "No ladder is running." in ladders_section(client.get("/").content.decode())


def test_the_ladder_activity_reads_the_same_queries_for_one_or_many_ladders_and_matches(
    owner,
) -> None:
    bots = make_bots(4, [owner], prefix="act")
    now = timezone.now()
    ladder, _ = Ladder.objects.get_or_create(variant=Variant.objects.get(name="oh-hell"))
    ladder_match(ladder, bots, MatchStatus.RUNNING, queued=now)
    with CaptureQueriesContext(connection) as few:
        ladders_activity()
    for name in ("blackout", "oh-well", "la-podrida"):
        other = Ladder.objects.create(variant=Variant.objects.get(name=name))
        for minutes in range(1, 30, 3):
            ladder_match(
                other,
                bots,
                MatchStatus.FINISHED,
                queued=now - timedelta(minutes=minutes + 1),
                finished=now - timedelta(minutes=minutes),
            )
    with CaptureQueriesContext(connection) as many:
        rows = ladders_activity()
    assert len(many) == len(few) == 3
    assert [r.finished_in_window for r in rows] == [10, 10, 0, 10]
    assert [r.ladder.variant.name for r in rows] == ["blackout", "la-podrida", "oh-hell", "oh-well"]


def test_a_ladder_matchs_page_names_its_ladder_and_links_to_the_leaderboard(
    client, world: World
) -> None:
    ladder, _ = Ladder.objects.get_or_create(variant=world.variant)
    now = timezone.now()
    match = ladder_match(ladder, world.bots[:4], MatchStatus.QUEUED, queued=now)
    body = client.get(f"/matches/{match.pk}/").content.decode()
    link = f'<a href="/leaderboard/{world.variant.name}/" class="ladder-link">'
    assert f"played on the {link}{world.variant.name} ladder</a>" in body
    tournament_match = client.get(f"/matches/{world.finished[0].pk}/").content.decode()
    assert "ladder-link" not in tournament_match
    assert world.tournament.name in tournament_match
    # The list shows a ladder table once it is over (a table in play names no one).
    over = ladder_match(ladder, world.bots[:4], MatchStatus.FINISHED, queued=now, finished=now)
    listed = client.get("/matches/").content.decode()
    assert f">#{match.pk}</a>" not in listed
    row = listed.split(f">#{over.pk}</a>")[1].split("</td>")[0]
    assert f'on the <a href="/leaderboard/{world.variant.name}/">ladder</a>' in row
