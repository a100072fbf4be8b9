"""Tournaments of every format played to the end against real HTTP bots."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.starting import start_and_generate
from tests.support.users import ladder_teams_apart
from tournaments.errors import ApplicationError
from tournaments.models import Match, MatchSeat, MatchStatus, Rating, Tournament, TournamentStatus
from tournaments.selectors.tournaments import (
    shared_owner_matches,
    tournament_progress,
    tournament_standings,
)
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.runs import match_run
from tournaments.services.tournaments import (
    Reconciled,
    tournament_advance,
    tournament_cancel,
    tournament_create,
    tournament_generate,
    tournament_pause,
    tournament_resume,
    tournament_start,
    tournament_start_due,
    tournaments_reconcile,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def short(db):
    from tests.support.users import make_user
    from tournaments.services.variants import variant_create

    return variant_create(
        user=make_user("maker", is_staff=True),
        name="two-deals",
        base="oh-hell",
        options={"max_cards": 2, "order": "down", "first_dealer": "random"},
    )


def _create(organiser, variant, bots, fmt, **fields):
    return tournament_create(
        organiser=organiser,
        name=f"{fmt} cup",
        variant=variant,
        format=fmt,
        bot_ids=[b.pk for b in bots],
        table_size=fields.pop("table_size", 3),
        time_limit_ms=500,
        rounds=fields.pop("rounds", 2),
        seed=fields.pop("seed", 99),
        **fields,
    )


def _marked_rated(tournament: Tournament) -> Tournament:
    """Staff mark the tournament rated (in the admin), so its matches change the ratings."""
    Tournament.objects.filter(pk=tournament.pk).update(rated=True)
    tournament.refresh_from_db()
    return tournament


def _play_out(tournament, limit: int = 200) -> list[Match]:
    """Play queued matches and advance the tournament until it finishes."""
    for _ in range(limit):
        queued = list(tournament.matches.filter(status=MatchStatus.QUEUED).order_by("pk"))
        for match in queued:
            assert match_run(match_id=match.pk) == "recorded"
        ratings_apply_pending()
        if tournament_advance(tournament_id=tournament.pk) == "finished":
            return list(tournament.matches.all())
    raise AssertionError("the tournament never finished")


def test_a_round_robin_gives_every_bot_the_same_number_of_matches_and_finishes(
    organiser, playing_bots, short
) -> None:
    bots = playing_bots(5)
    tournament = _marked_rated(_create(organiser, short, bots, "round_robin"))
    tournament = start_and_generate(tournament)
    matches = _play_out(tournament)
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.FINISHED and tournament.finished_at
    counts = Counter(MatchSeat.objects.filter(match__in=matches).values_list("bot_id", flat=True))
    assert len(set(counts.values())) == 1 and set(counts) == {b.pk for b in bots}
    standings = tournament_standings(tournament=tournament)
    assert standings["final"] and standings["winners"]
    totals = [line["total_score"] for line in standings["standings"]]
    assert totals == sorted(totals, reverse=True)
    progress = tournament_progress(tournament=tournament)
    assert progress.done == progress.total == len(matches) and progress.percent == 100.0
    assert Rating.objects.filter(variant=short).count() == 5


def test_a_duplicate_tournament_replays_each_seed_in_every_rotation_and_ranks_by_it(
    organiser, playing_bots, short
) -> None:
    bots = playing_bots(3)
    tournament = _marked_rated(_create(organiser, short, bots, "duplicate", rounds=1))
    tournament = start_and_generate(tournament)
    matches = _play_out(tournament)
    groups = Counter(m.duplicate_group for m in matches)
    assert all(n == 3 for n in groups.values())
    for group in groups:
        assert len({m.seed for m in matches if m.duplicate_group == group}) == 1
    standings = tournament_standings(tournament=tournament)["standings"]
    scores = [line["duplicate_score"] for line in standings]
    assert scores == sorted(scores, reverse=True)
    assert sum(scores) == pytest.approx(0, abs=0.05)  # shown to two decimals
    assert set(
        Match.objects.filter(pk__in=[m.pk for m in matches]).values_list("rating_group", flat=True)
    ) != {""}


def test_swiss_rounds_are_generated_one_at_a_time_from_the_standings(
    organiser, playing_bots, short
) -> None:
    bots = playing_bots(6)
    tournament = start_and_generate(_create(organiser, short, bots, "swiss", rounds=3))
    assert set(tournament.matches.values_list("round", flat=True)) == {0}
    matches = _play_out(tournament)
    assert sorted(set(m.round for m in matches)) == [0, 1, 2]
    tables = [
        frozenset(MatchSeat.objects.filter(match=m).values_list("bot_id", flat=True))
        for m in matches
    ]
    assert len(tables) == len(set(tables)), "no table repeats"


def test_a_ladder_keeps_matches_flowing_until_its_budget_and_starves_nobody(
    organiser, playing_bots, short
) -> None:
    bots = playing_bots(6)
    tournament = start_and_generate(_create(organiser, short, bots, "ladder", rounds=4))
    assert 0 < tournament.matches.count() <= 4
    matches = _play_out(tournament)
    assert len(matches) == 4 * 6 // 3
    counts = Counter(MatchSeat.objects.filter(match__in=matches).values_list("bot_id", flat=True))
    assert set(counts) == {b.pk for b in bots}
    assert max(counts.values()) - min(counts.values()) <= 3


def _seatings(matches) -> list[set[int]]:
    return [set(m.seats.values_list("bot_id", flat=True)) for m in matches]


def test_a_ladder_event_keeps_the_bots_of_one_owner_apart(organiser, playing_bots, short) -> None:
    bots = playing_bots(6)
    ladder_teams_apart(bots[3:])  # three bots of the owner, three of three others
    mine = {b.pk for b in bots[:3]}
    tournament = start_and_generate(_create(organiser, short, bots, "ladder", rounds=4))
    matches = _play_out(tournament)
    assert len(matches) == 4 * 6 // 3
    assert max(len(seats & mine) for seats in _seatings(matches)) == 1
    standings = tournament_standings(tournament=tournament)
    assert standings["shared_owner_tables"] == 0
    assert {line["shared_owner_tables"] for line in standings["standings"]} == {0}


def test_a_ladder_event_of_one_owners_bots_still_finishes_and_counts_their_tables(
    organiser, playing_bots, short
) -> None:
    bots = playing_bots(4)
    tournament = start_and_generate(_create(organiser, short, bots, "ladder", rounds=3))
    matches = _play_out(tournament)
    assert len(matches) == 3 * 4 // 3
    standings = tournament_standings(tournament=tournament)
    assert standings["shared_owner_tables"] == len(matches)
    for line in standings["standings"]:
        assert line["shared_owner_tables"] == line["matches"]
    assert shared_owner_matches(tournament=tournament) == {m.pk for m in matches}


def test_pause_holds_queued_matches_resume_releases_them_and_cancel_ends_it(
    organiser, playing_bots, short
) -> None:
    bots = playing_bots(3)
    tournament = start_and_generate(_create(organiser, short, bots, "round_robin"))
    tournament_pause(tournament=tournament)
    first = tournament.matches.earliest("pk")
    assert match_run(match_id=first.pk) == "not-claimable"
    tournament_resume(tournament=tournament)
    assert match_run(match_id=first.pk) == "recorded"
    tournament = tournament_cancel(tournament=tournament)
    assert tournament.status == TournamentStatus.CANCELLED
    assert not tournament.matches.filter(status=MatchStatus.QUEUED).exists()
    assert tournament.matches.filter(status=MatchStatus.FINISHED).count() == 1
    with pytest.raises(ApplicationError, match="cannot become"):
        tournament_resume(tournament=tournament)


def test_a_scheduled_tournament_starts_when_its_time_comes(organiser, playing_bots, short) -> None:
    bots = playing_bots(3)
    start_at = timezone.now() + timedelta(minutes=5)
    tournament = _create(organiser, short, bots, "round_robin", start_at=start_at)
    assert tournament.status == TournamentStatus.SCHEDULED
    assert tournament_start_due(now=timezone.now()) == 0
    assert tournament_start_due(now=start_at + timedelta(seconds=1)) == 1
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.STARTING and not tournament.matches.exists()
    assert tournament_generate(tournament_id=tournament.pk) == "running"
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.RUNNING and tournament.matches.exists()


def test_a_table_the_variant_cannot_seat_is_refused_naming_the_field(
    organiser, playing_bots, oh_hell
) -> None:
    bots = playing_bots(8)
    with pytest.raises(ApplicationError) as refused:
        _create(organiser, oh_hell, bots, "round_robin", table_size=8)
    assert refused.value.field == "table_size"


def test_a_tournament_whose_last_advance_message_was_lost_is_finished_by_the_reconciler(
    organiser, playing_bots, short
) -> None:
    bots = playing_bots(3)
    tournament = start_and_generate(_create(organiser, short, bots, "round_robin"))
    # Each finished match sends its advance after commit; this test's transaction never
    # commits, so every one of those messages is lost, as with a broker down at that moment.
    for match in tournament.matches.all():
        assert match_run(match_id=match.pk) == "recorded"
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.RUNNING  # stuck without the reconciler
    assert tournaments_reconcile() == Reconciled(restarted=0, advanced=1)
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.FINISHED
    assert tournaments_reconcile() == Reconciled(restarted=0, advanced=0)


def test_the_reconciler_plays_on_a_swiss_tournament_and_leaves_busy_ones_alone(
    organiser, playing_bots, short
) -> None:
    bots = playing_bots(6)
    swiss = start_and_generate(_create(organiser, short, bots, "swiss", rounds=2))
    busy = start_and_generate(_create(organiser, short, bots, "round_robin"))
    for match in swiss.matches.all():
        assert match_run(match_id=match.pk) == "recorded"
    assert tournaments_reconcile() == Reconciled(restarted=0, advanced=1)
    assert set(swiss.matches.values_list("round", flat=True)) == {0, 1}
    busy.refresh_from_db()
    assert busy.status == TournamentStatus.RUNNING


def test_a_tournament_left_starting_is_generated_again_after_a_while(
    organiser, playing_bots, short
) -> None:
    tournament = _create(organiser, short, playing_bots(3), "round_robin")
    tournament_start(tournament=tournament)  # its generation message is lost with the rollback
    assert tournaments_reconcile() == Reconciled(restarted=0, advanced=0)  # not yet stale
    assert tournaments_reconcile(stale_after=timedelta(0)).restarted == 1
