"""Only ladder matches and tournaments staff mark rated change the public ratings; every
tournament keeps its standings, and a recompute agrees with the live numbers."""

from __future__ import annotations

import pytest

from tests.support.rating_world import World, assert_live_equals_recompute, rating_snapshot
from tournaments.models import Match, Rating, RatingHistory
from tournaments.selectors.ratings import leaderboard
from tournaments.selectors.tournaments import tournament_standings
from tournaments.services.ratings import ratings_apply_pending

pytestmark = pytest.mark.django_db


@pytest.fixture
def four(make_bot, owner):
    return [make_bot(owner, status="active") for _ in range(4)]


def _board(variant) -> list[tuple[int, float, float, int]]:
    return list(leaderboard(variant=variant).values_list("bot_id", "mu", "sigma", "matches"))


def test_an_organisers_unrated_tournament_leaves_the_public_leaderboard_unchanged(
    organiser, oh_hell, four
) -> None:
    counted = World.create(organiser=organiser, variant=oh_hell)
    counted.finish(counted.single(four), minute=1)
    assert ratings_apply_pending() == 1
    board, history = _board(oh_hell), RatingHistory.objects.count()
    assert len(board) == 4

    farm = World.create(organiser=organiser, variant=oh_hell, rated=False)
    played = [farm.single(four), farm.single(list(reversed(four)))]
    for minute, match in enumerate(played, start=2):
        farm.finish(match, minute=minute)
    group = farm.group(four[:3], "0.0")
    for minute, match in enumerate(group, start=5):
        farm.finish(match, minute=minute)

    assert ratings_apply_pending() == 5  # handled, each once
    assert ratings_apply_pending() == 0
    assert _board(oh_hell) == board
    assert RatingHistory.objects.count() == history
    handled = Match.objects.filter(tournament=farm.tournament)
    assert set(handled.values_list("rated", "rating_sequence", "rating_group")) == {
        (True, None, "")
    }
    standings = tournament_standings(tournament=farm.tournament)["standings"]
    assert {line["bot"] for line in standings} == {b.pk for b in four}
    assert sum(line["matches"] for line in standings) == 4 + 4 + 3 * 3


def test_a_tournament_staff_marked_rated_changes_the_leaderboard(organiser, oh_hell, four) -> None:
    world = World.create(organiser=organiser, variant=oh_hell, rated=True)
    world.finish(world.single(four), minute=1)
    assert _board(oh_hell) == []
    assert ratings_apply_pending() == 1
    assert {bot for bot, *_ in _board(oh_hell)} == {b.pk for b in four}
    assert Match.objects.get(tournament=world.tournament).rating_sequence is not None


def test_a_recompute_equals_the_live_ratings_beside_unrated_tournaments(
    organiser, oh_hell, four
) -> None:
    rated = World.create(organiser=organiser, variant=oh_hell)
    unrated = World.create(organiser=organiser, variant=oh_hell, rated=False)
    minute = 0
    for round_ in range(3):
        for world in (unrated, rated):
            minute += 1
            world.finish(world.single(four[round_:] + four[:round_]), minute=minute, seed=round_)
        for match in unrated.group(four[:3], f"{round_}.0"):
            minute += 1
            unrated.finish(match, minute=minute)
        ratings_apply_pending()
    rated.new_version(four[0], minute=minute + 1)
    rated.finish(rated.single(four), minute=minute + 2)
    ratings_apply_pending()

    live = assert_live_equals_recompute()
    assert len(live["history"]) == 4 * 4 + 1  # the rated tournament's four matches, a version
    assert Rating.objects.filter(variant=oh_hell).count() == 4
    assert rating_snapshot() == live
