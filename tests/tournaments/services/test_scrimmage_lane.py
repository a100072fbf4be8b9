"""The scrimmage lane at claim time: consent and playability are read again when each match is
claimed, and one account holds at most its share of the lane."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tests.support.users import make_confirmed_user
from tournaments.models import Bot, ConfirmedEmail, Match, MatchStatus, Scrimmage, Variant
from tournaments.services.bots import bot_disable, bot_rotate_secret, bot_update
from tournaments.services.matches import match_claim
from tournaments.services.scrimmage_lane import lane_seconds
from tournaments.services.scrimmages import ScrimmageRequest, scrimmage_create

pytestmark = pytest.mark.django_db


def ask(owner: User, bot: Bot, variant: Variant, matches: int, *opponents: Bot) -> Scrimmage:
    return scrimmage_create(
        owner=owner,
        request=ScrimmageRequest(
            bot_id=bot.pk,
            variant=variant,
            matches=matches,
            opponent_ids=[o.pk for o in opponents],
            reference_players=["random"],
        ),
    )


def queued(scrimmage: Scrimmage) -> list[int]:
    return list(
        scrimmage.matches.filter(status=MatchStatus.QUEUED)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def claim(match_id: int) -> bool:
    return match_claim(match_id=match_id, token=f"token-{match_id}")


@pytest.fixture
def practice(make_bot, owner, other_user, oh_hell):
    """The owner's scrimmage of 3 matches against another owner's bot that accepts them."""
    mine = make_bot(owner, name="practiser", status="active")
    theirs = make_bot(other_user, name="sparring", status="active", accepts_scrimmages=True)
    return ask(owner, mine, oh_hell, 3, theirs), theirs


def assert_cancelled(scrimmage: Scrimmage, words: str) -> None:
    statuses = set(scrimmage.matches.values_list("status", flat=True))
    assert statuses == {MatchStatus.CANCELLED}
    scrimmage.refresh_from_db()
    assert scrimmage.cancelled_at is not None and words in scrimmage.cancel_reason


def test_a_withdrawn_consent_stops_the_queued_matches(practice) -> None:
    scrimmage, theirs = practice
    bot_update(bot=theirs, data={"accepts_scrimmages": False})
    assert not claim(queued(scrimmage)[0])
    assert_cancelled(scrimmage, "no longer accepts scrimmages")


def test_a_rotated_secret_stops_the_queued_matches(practice) -> None:
    scrimmage, theirs = practice
    bot_rotate_secret(bot=theirs)
    assert not claim(queued(scrimmage)[0])
    assert_cancelled(scrimmage, f"bot {theirs.name} is pending")


def test_a_disabled_bot_of_the_owner_stops_its_own_scrimmage(practice) -> None:
    scrimmage, _ = practice
    bot_disable(bot=scrimmage.bot, reason="broken")
    assert not claim(queued(scrimmage)[0])
    assert_cancelled(scrimmage, "is disabled")


def test_an_address_no_longer_confirmed_stops_the_queued_matches(practice, owner) -> None:
    scrimmage, _ = practice
    ConfirmedEmail.objects.filter(user=owner).delete()
    assert not claim(queued(scrimmage)[0])
    assert_cancelled(scrimmage, "no longer confirmed")


def test_a_match_whose_bots_still_may_play_is_claimed(practice) -> None:
    scrimmage, _ = practice
    first = queued(scrimmage)[0]
    assert claim(first)
    assert Match.objects.get(pk=first).status == MatchStatus.RUNNING
    assert Scrimmage.objects.get(pk=scrimmage.pk).cancelled_at is None


def test_an_account_plays_at_most_its_share_at_once_while_another_starts(
    make_bot, owner, oh_hell, settings
) -> None:
    settings.SCRIMMAGE_OWNER_MATCHES_IN_FLIGHT = 2
    mine = [make_bot(owner, name=f"mine-{i}", status="active") for i in range(2)]
    flood = ask(owner, mine[0], oh_hell, 5, mine[1])
    ids = queued(flood)
    assert claim(ids[0]) and claim(ids[1])
    assert not claim(ids[2])  # the account's two places are taken
    assert Match.objects.get(pk=ids[2]).status == MatchStatus.QUEUED  # waits, not cancelled
    someone = make_confirmed_user("someone")
    theirs = [make_bot(someone, name=f"theirs-{i}", status="active") for i in range(2)]
    first = queued(ask(someone, theirs[0], oh_hell, 1, theirs[1]))[0]
    assert claim(first)


def test_an_account_with_more_lane_time_yields_its_second_place_to_one_waiting(
    make_bot, owner, oh_hell, settings
) -> None:
    settings.SCRIMMAGE_OWNER_MATCHES_IN_FLIGHT = 2
    mine = [make_bot(owner, name=f"mine-{i}", status="active") for i in range(2)]
    flood = ask(owner, mine[0], oh_hell, 4, mine[1])
    ids = queued(flood)
    assert claim(ids[0])
    # Its first match has held the lane for ten minutes.
    Match.objects.filter(pk=ids[0]).update(started_at=timezone.now() - timedelta(minutes=10))
    assert lane_seconds(owner_id=owner.pk, since=timezone.now() - timedelta(hours=1)) >= 599
    someone = make_confirmed_user("someone")
    theirs = [make_bot(someone, name=f"theirs-{i}", status="active") for i in range(2)]
    waiting = queued(ask(someone, theirs[0], oh_hell, 1, theirs[1]))[0]
    assert not claim(ids[1])  # someone with less lane time waits: no second place
    assert claim(waiting)
    assert claim(ids[1])  # nobody waits any more: the second place is the account's again
