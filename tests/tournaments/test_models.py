"""Invariants the database itself enforces, whoever writes."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from tournaments.models import (
    BotHealthCheck,
    BotStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingHistory,
    Replay,
    SeatFault,
    Tournament,
    TournamentEntry,
    is_organiser,
)


def refused(create) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        create()


def test_bot_names_are_unique_whatever_the_case(make_bot, owner, other_user) -> None:
    make_bot(owner, name="Clubs")
    refused(lambda: make_bot(other_user, name="cLUBS"))


def test_a_disabled_bot_has_a_cause_and_only_a_disabled_one(bot) -> None:
    from tournaments.models import Bot

    refused(lambda: Bot.objects.filter(pk=bot.pk).update(status=BotStatus.DISABLED))
    refused(lambda: Bot.objects.filter(pk=bot.pk).update(disabled_cause="admin"))
    refused(lambda: Bot.objects.filter(pk=bot.pk).update(status="sleeping"))
    refused(lambda: Bot.objects.filter(pk=bot.pk).update(secret=""))


def test_a_failed_health_check_names_its_error_and_a_passed_one_none(bot) -> None:
    refused(lambda: BotHealthCheck.objects.create(bot=bot, ok=False))
    refused(lambda: BotHealthCheck.objects.create(bot=bot, ok=True, error_kind="timeout"))


def test_seats_are_unique_per_match_by_index_and_by_bot(make_bot, owner, bot, oh_hell) -> None:
    match = Match.objects.create(variant=oh_hell)
    MatchSeat.objects.create(match=match, seat=0, bot=bot)
    refused(lambda: MatchSeat.objects.create(match=match, seat=0, bot=make_bot(owner)))
    refused(lambda: MatchSeat.objects.create(match=match, seat=1, bot=bot))
    refused(lambda: MatchSeat.objects.create(match=match, seat=8, bot=make_bot(owner)))


def test_a_seat_cannot_make_more_exact_bids_than_it_bid(bot, oh_hell) -> None:
    match = Match.objects.create(variant=oh_hell)
    refused(
        lambda: MatchSeat.objects.create(match=match, seat=0, bot=bot, bids_exact=3, bids_total=2)
    )


def test_a_fault_kind_is_recorded_once_per_seat(bot, oh_hell) -> None:
    seat = MatchSeat.objects.create(match=Match.objects.create(variant=oh_hell), seat=0, bot=bot)
    SeatFault.objects.create(seat=seat, kind="timeout", count=2)
    refused(lambda: SeatFault.objects.create(seat=seat, kind="timeout"))
    refused(lambda: SeatFault.objects.create(seat=seat, kind="bored"))


def test_a_match_is_rated_only_when_finished_and_sequenced(oh_hell) -> None:
    now = timezone.now()
    refused(
        lambda: Match.objects.create(variant=oh_hell, rated=True, rated_at=now, rating_sequence=1)
    )
    refused(lambda: Match.objects.create(variant=oh_hell, status=MatchStatus.FINISHED))
    done = dict(status=MatchStatus.FINISHED, finished_at=now, rated=True, rated_at=now)
    Match.objects.create(variant=oh_hell, rating_sequence=1, **done)
    refused(lambda: Match.objects.create(variant=oh_hell, rating_sequence=1, **done))
    refused(lambda: Match.objects.create(variant=oh_hell, attempts=4, max_attempts=3))


def test_a_rated_match_cannot_be_deleted_but_an_unrated_one_can(bot, oh_hell) -> None:
    from django.db.models import ProtectedError

    now = timezone.now()
    match = Match.objects.create(
        variant=oh_hell,
        status="finished",
        finished_at=now,
        rated=True,
        rated_at=now,
        rating_sequence=7,
    )
    RatingHistory.objects.create(
        bot=bot,
        variant=oh_hell,
        match=match,
        sequence=7,
        mu_before=25,
        sigma_before=8,
        mu_after=27,
        sigma_after=7,
    )
    with pytest.raises(ProtectedError):
        match.delete()
    Match.objects.create(variant=oh_hell).delete()


def test_the_conservative_rating_is_stored_by_the_database(bot, oh_hell) -> None:
    rating = Rating.objects.create(bot=bot, variant=oh_hell, mu=30.0, sigma=2.0)
    assert Rating.objects.get(pk=rating.pk).conservative == pytest.approx(24.0)
    Rating.objects.filter(pk=rating.pk).update(mu=31.0)
    assert Rating.objects.get(pk=rating.pk).conservative == pytest.approx(25.0)
    refused(lambda: Rating.objects.create(bot=bot, variant=oh_hell))
    refused(lambda: Rating.objects.filter(pk=rating.pk).update(sigma=0))


def test_tournament_settings_are_bounded(organiser, oh_hell) -> None:
    base = dict(name="t", organiser=organiser, variant=oh_hell, format="round_robin")
    refused(lambda: Tournament.objects.create(**base, table_size=2))
    refused(lambda: Tournament.objects.create(**base, table_size=9))
    refused(lambda: Tournament.objects.create(**base, time_limit_ms=5))
    refused(lambda: Tournament.objects.create(**{**base, "format": "knockout"}))
    refused(lambda: Tournament.objects.create(**base, rounds=0))
    refused(lambda: Tournament.objects.create(**base, finished_at=timezone.now()))


def test_a_bot_enters_a_tournament_once(organiser, bot, oh_hell) -> None:
    tournament = Tournament.objects.create(
        name="t", organiser=organiser, variant=oh_hell, format="swiss"
    )
    TournamentEntry.objects.create(tournament=tournament, bot=bot)
    refused(lambda: TournamentEntry.objects.create(tournament=tournament, bot=bot))


def test_a_replay_belongs_to_exactly_one_match(oh_hell) -> None:
    match = Match.objects.create(variant=oh_hell)
    Replay.objects.create(match=match, data={"records": []})
    refused(lambda: Replay.objects.create(match=match, data={}))


def test_staff_and_organisers_organise_and_others_do_not(staff, organiser, owner) -> None:
    from django.contrib.auth.models import AnonymousUser

    assert is_organiser(staff) and is_organiser(organiser)
    assert not is_organiser(owner) and not is_organiser(AnonymousUser())
