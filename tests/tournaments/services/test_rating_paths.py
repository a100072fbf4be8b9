"""Live ratings equal a recompute on every path: retried rotations, waiting groups, dates,
new bot versions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.db.models import Max
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.rating_world import World, assert_live_equals_recompute, rating_snapshot
from tournaments.models import Match, MatchStatus, RatingHistory, TournamentStatus
from tournaments.selectors.ratings import bot_ratings_on, rating_on
from tournaments.services.matches import match_retry
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.recompute import ratings_recompute
from tournaments.services.tournaments import tournament_pause, tournament_resume

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(organiser, oh_hell) -> World:
    return World.create(organiser=organiser, variant=oh_hell)


@pytest.fixture
def four(make_bot, owner):
    return [make_bot(owner, status="active") for _ in range(4)]


def test_rotations_retried_after_the_rest_of_their_group_was_rated_rate_alike_in_a_recompute(
    world, four
) -> None:
    rotations = world.group(four, "0.0")
    world.finish(rotations[0], minute=1)
    world.finish(rotations[1], minute=2)
    world.fail(rotations[2], minute=3)
    world.fail(rotations[3], minute=4)
    assert ratings_apply_pending() == 2  # the two played rotations, as one update
    for i, match in enumerate(rotations[2:]):
        match_retry(match=match)
        world.finish(match, minute=10 + i, seed=5)
    assert ratings_apply_pending() == 2  # the retried two: a second update of their own
    live = assert_live_equals_recompute()
    groups = [group for _, _, group in live["matches"]]
    assert groups[0] == groups[1] and groups[2] == groups[3] and groups[0] != groups[2]
    assert {row[4] for row in live["history"]} == {1, 3}  # two updates, four bots each
    assert all(matches == 2 for *_, matches in live["ratings"])


def test_rotations_waiting_for_a_queued_one_do_not_stop_the_matches_behind_them(
    world, make_bot
) -> None:
    bots = [make_bot(world.tournament.organiser, status="active") for _ in range(6)]
    waiting = []
    for g in range(3):
        rotations = world.group(bots[g : g + 3], f"0.{g}")
        world.finish(rotations[0], minute=g)
        world.finish(rotations[1], minute=g + 0.5)
        waiting += rotations[:2]  # the third rotation stays queued
    later = world.single(bots[3:6])
    world.finish(later, minute=30)
    assert ratings_apply_pending(batch=4) == 1
    later.refresh_from_db()
    assert later.rated
    assert not Match.objects.filter(pk__in=[m.pk for m in waiting], rated=True).exists()


def test_a_group_counts_on_a_date_only_once_its_last_rotation_has_ended(
    world, four, make_bot
) -> None:
    a, b, c, d = four
    rotations = world.group([a, b, c], "0.0")
    world.finish(rotations[0], minute=1)
    between = world.single([a, b, d])
    world.finish(between, minute=2)
    world.finish(rotations[1], minute=3)
    world.finish(rotations[2], minute=4)
    assert ratings_apply_pending() == 4
    times = list(RatingHistory.objects.order_by("sequence").values_list("at", flat=True))
    assert times == sorted(times)
    # Between the single match (minute 2) and the group's end (minute 4): the single match only.
    when = world.start + timedelta(minutes=3.5)
    before_group = rating_on(bot_id=d.pk, variant=world.variant, when=when)
    single_row = RatingHistory.objects.get(match=between, bot=d)
    assert before_group is not None and before_group["mu"] == single_row.mu_after
    rows = RatingHistory.objects.filter(bot=a).order_by("sequence")
    assert [r.match_id for r in rows] == [between.pk, rotations[0].pk]
    on_date = bot_ratings_on(bot_id=a.pk, when=when)
    assert on_date[0].matches == 1 and on_date[0].mu == rows[0].mu_after
    assert_live_equals_recompute()


# --- random interleavings ------------------------------------------------------------------

OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(
            ["finish"] * 5 + ["fail", "retry", "pause", "version", "rate", "rate", "recompute"]
        ),
        st.integers(0, 8),  # which match (or bot, for a new version)
        st.integers(-3, 3),  # how far its end time strays from the order of events
    ),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=OPERATIONS)
def test_any_interleaving_of_finish_fail_retry_pause_version_and_recompute_rates_as_a_recompute(
    organiser, oh_hell, make_bot, owner, operations
) -> None:
    with transaction.atomic():
        world = World.create(organiser=organiser, variant=oh_hell)
        bots = [make_bot(owner, status="active") for _ in range(5)]
        matches = [
            *world.group(bots[0:3], "0.0"),
            *world.group(bots[1:4], "0.1"),
            world.single(bots[2:5]),
            world.single([bots[4], bots[0], bots[1]]),
            world.single(bots[0:4]),
        ]
        for step, (kind, index, stray) in enumerate(operations):
            match = Match.objects.get(pk=matches[index].pk)
            minute = 10 * step + stray
            tournament = world.tournament
            tournament.refresh_from_db()
            if kind == "finish" and match.status == MatchStatus.QUEUED:
                world.finish(match, minute=minute, seed=step)
            elif kind == "fail" and match.status == MatchStatus.QUEUED:
                world.fail(match, minute=minute)
            elif kind == "retry" and match.status == MatchStatus.FAILED:
                match_retry(match=match)
            elif kind == "version":
                world.new_version(bots[index % len(bots)], minute=minute)
            elif kind == "pause":
                if tournament.status == TournamentStatus.RUNNING:
                    tournament_pause(tournament=tournament)
                else:
                    tournament_resume(tournament=tournament)
            elif kind == "rate":
                ratings_apply_pending(batch=3)
            elif kind == "recompute":
                before = rating_snapshot()
                ratings_recompute()
                assert rating_snapshot() == before
        ratings_apply_pending(batch=3)
        assert_live_equals_recompute()
        times = list(RatingHistory.objects.order_by("sequence").values_list("at", flat=True))
        assert times == sorted(times)
        transaction.set_rollback(True)


# --- bot versions ----------------------------------------------------------------------------


def test_a_new_version_keeps_mu_raises_sigma_and_is_marked_in_the_history(
    world, four, settings, make_bot
) -> None:
    settings.RATING_VERSION_SIGMA = 6.5
    a, b, c, d = four
    played = [world.single([a, b, c]), world.single([a, c, d])]
    for i, match in enumerate(played):
        world.finish(match, minute=i, seed=i)
    ratings_apply_pending()
    before = {r.variant_id: (r.mu, r.sigma, r.matches) for r in a.ratings.all()}
    version = world.new_version(a, minute=5)
    a.refresh_from_db()
    assert a.version == 2 and version.version == 2 and version.sigma_floor == 6.5
    assert ratings_apply_pending() == 1
    ((_, (mu, sigma, matches)),) = before.items()
    rating = a.ratings.get()
    assert (rating.mu, rating.sigma, rating.matches) == (mu, max(sigma, 6.5), matches)
    assert sigma < 6.5  # two matches made it surer than the floor
    mark = RatingHistory.objects.get(bot=a, match=None)
    assert (mark.version, mark.mu_before, mark.mu_after) == (2, mu, mu)
    assert (mark.sigma_before, mark.sigma_after) == (sigma, 6.5)
    assert mark.sequence > Match.objects.aggregate(last=Max("rating_sequence"))["last"]
    later = world.single([a, b, d])
    world.finish(later, minute=10, seed=3)
    ratings_apply_pending()
    assert RatingHistory.objects.get(bot=a, match=later).sigma_before == 6.5
    assert Match.objects.filter(seats__bot=a).count() == 3  # the past matches stay
    assert RatingHistory.objects.filter(bot=a, match__in=played).count() == 2
    assert_live_equals_recompute()


def test_a_new_version_before_any_rated_match_changes_no_rating(world, four) -> None:
    a, b, c, _ = four
    world.new_version(a, minute=0)
    assert ratings_apply_pending() == 1
    assert not RatingHistory.objects.exists()
    match = world.single([a, b, c])
    world.finish(match, minute=1)
    ratings_apply_pending()
    assert a.ratings.get().sigma < 25 / 3
    assert_live_equals_recompute()
