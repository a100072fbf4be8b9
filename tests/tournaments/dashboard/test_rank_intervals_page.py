"""The leaderboard page shows each bot's batch rank and says in words what its interval means."""

from __future__ import annotations

import re

import pytest

from tournaments.models import RankInterval
from tournaments.services.rank_intervals import rank_intervals_fit

pytestmark = pytest.mark.django_db


def _row(html: str, bot_id: int) -> str:
    (row,) = re.findall(rf'<tr[^>]*data-bot="{bot_id}">(.*?)</tr>', html, re.S)
    return row


def test_each_bot_shows_its_batch_rank_and_interval_with_their_meaning(
    client, world, settings
) -> None:
    settings.RANK_INTERVALS_RESAMPLES = 20
    settings.RANK_INTERVALS_MIN_MATCHES = 3
    assert rank_intervals_fit(variant_id=world.variant.pk)
    html = client.get("/leaderboard/oh-hell/").content.decode()
    rows = list(RankInterval.objects.all())
    assert len(rows) == len(world.bots)
    for row in rows:
        assert row.low is not None
        assert re.search(r"\d+(st|nd|rd|th); \d+(st|nd|rd|th)(-\d+(st|nd|rd|th))? at 90%", row.text)
        assert f'<td class="interval">{row.text}</td>' in _row(html, row.bot_id)
    note = re.sub(r"\s+", " ", html)
    assert "the latest 12 rated matches of oh-hell fitted all at once" in note
    assert "refitting on resampled matches (20 times" in note
    assert "placed this bot between 2nd and 5th nine times in ten" in note
    assert "/api/leaderboard/intervals/?variant=oh-hell" in note


def test_a_bot_with_too_few_matches_says_so_instead_of_an_interval(client, world, settings) -> None:
    settings.RANK_INTERVALS_RESAMPLES = 20
    assert rank_intervals_fit(variant_id=world.variant.pk)  # 6 matches each, 10 needed
    html = client.get("/leaderboard/oh-hell/").content.decode()
    for row in RankInterval.objects.all():
        assert row.low is None
        cell = f'<td class="interval">{row.text}</td>'
        assert row.text.endswith("; too few matches for an interval") and cell in _row(
            html, row.bot_id
        )


def test_before_the_first_fit_the_page_says_it_is_coming(client, world) -> None:
    html = re.sub(r"\s+", " ", client.get("/leaderboard/oh-hell/").content.decode())
    assert "Batch rank: not fitted yet" in html
    assert html.count('<td class="interval">\N{EN DASH}</td>') == len(world.bots)
