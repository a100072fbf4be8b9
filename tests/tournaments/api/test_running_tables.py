"""What a ladder table in play shows: no one learns who sits at it but each seat's owner (their
own seat) and staff, on the API and the pages alike, until the match is over."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from tests.support.users import client_for, make_confirmed_user
from tournaments.models import Bot, Match, MatchSeat, MatchStatus
from tournaments.services.ladders import ladder_ensure_default

pytestmark = pytest.mark.django_db


@pytest.fixture
def table(make_bot, owner, other_user, oh_hell) -> tuple[Match, list[Bot]]:
    """A ladder match running with a bot of owner, other_user and a third account."""
    ladder = ladder_ensure_default()
    third = make_confirmed_user("third")
    bots = [make_bot(user, status="active") for user in (owner, other_user, third)]
    match = Match.objects.create(
        variant=oh_hell, ladder=ladder, status=MatchStatus.RUNNING, started_at=timezone.now()
    )
    for seat, bot in enumerate(bots):
        MatchSeat.objects.create(match=match, seat=seat, bot=bot)
    return match, bots


def _bots_shown(body: dict) -> list[int | None]:
    return [seat["bot"] for seat in body["seats"]]


def test_anonymous_readers_see_no_bot_at_a_ladder_table_in_play(anonymous_client, table) -> None:
    match, bots = table
    detail = anonymous_client.get(f"/api/matches/{match.pk}/").json()
    assert _bots_shown(detail) == [None, None, None]
    assert all(seat["bot_name"] is None for seat in detail["seats"])
    listed = anonymous_client.get("/api/matches/").json()["results"]
    assert [_bots_shown(m) for m in listed if m["id"] == match.pk] == [[None, None, None]]
    # Nor can a bot's matches be filtered to find its table.
    by_bot = anonymous_client.get(f"/api/matches/?bot={bots[1].pk}").json()
    assert by_bot["count"] == 0


def test_an_owner_sees_their_own_seat_only_and_staff_see_every_seat(
    owner, other_user, staff, table
) -> None:
    match, bots = table
    mine = client_for(owner).get(f"/api/matches/{match.pk}/").json()
    assert _bots_shown(mine) == [bots[0].pk, None, None]
    assert client_for(owner).get(f"/api/matches/?bot={bots[0].pk}").json()["count"] == 1
    assert client_for(owner).get(f"/api/matches/?bot={bots[1].pk}").json()["count"] == 0
    theirs = client_for(other_user).get(f"/api/matches/{match.pk}/").json()
    assert _bots_shown(theirs) == [None, bots[1].pk, None]
    everyone = client_for(staff).get(f"/api/matches/{match.pk}/").json()
    assert _bots_shown(everyone) == [bot.pk for bot in bots]


def test_the_table_is_shown_to_everyone_once_the_match_is_over(anonymous_client, table) -> None:
    match, bots = table
    match.status = MatchStatus.FINISHED
    match.finished_at = timezone.now()
    match.save(update_fields=["status", "finished_at"])
    detail = anonymous_client.get(f"/api/matches/{match.pk}/").json()
    assert _bots_shown(detail) == [bot.pk for bot in bots]
    assert anonymous_client.get(f"/api/matches/?bot={bots[1].pk}").json()["count"] == 1


def test_the_match_page_and_the_bot_pages_name_no_bot_of_a_table_in_play(table) -> None:
    match, bots = table
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    assert "shown when the match is over" in page
    assert not any(bot.name in page for bot in bots)
    for url in (f"/bots/{bots[1].pk}/", f"/matches/?bot={bots[1].pk}", "/matches/"):
        assert f"/matches/{match.pk}/" not in Client().get(url).content.decode(), url
