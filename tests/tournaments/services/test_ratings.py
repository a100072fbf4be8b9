"""TrueSkill ratings: checked against the trueskill package, applied once, recomputed exactly."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.trueskill_package import package_env
from tournaments.models import Match, MatchSeat, MatchStatus, Rating, RatingHistory
from tournaments.selectors.ratings import leaderboard, rating_on
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.recompute import ratings_recompute

pytestmark = pytest.mark.django_db


@pytest.fixture
def bots(make_bot, owner):
    return [make_bot(owner, status="active") for _ in range(5)]


@pytest.fixture
def finished(oh_hell):
    """Create a finished match with the given (bot, score[, disqualified]) per seat."""
    clock = iter(range(1, 10_000))

    def make(rows, status=MatchStatus.FINISHED, variant=None):
        when = timezone.now() - timedelta(days=1) + timedelta(minutes=next(clock))
        match = Match.objects.create(
            variant=variant or oh_hell, status=status, finished_at=when, started_at=when
        )
        for seat, row in enumerate(rows):
            bot, score, *dq = row
            MatchSeat.objects.create(
                match=match,
                seat=seat,
                bot=bot,
                score=score,
                rank=1,
                disqualified=bool(dq and dq[0]),
            )
        return match

    return make


def test_updates_equal_the_trueskill_package_on_hand_made_results_with_ties(bots, finished) -> None:
    a, b, c, d, e = bots
    tables = [
        [(a, 50), (b, 40), (c, 40), (d, 10)],  # b and c tie: a draw between them
        [(e, 30), (a, 30), (c, 20)],
        [(d, 70), (c, 60), (b, 50), (a, 40), (e, 30)],
    ]
    for table in tables:
        finished(table)
    assert ratings_apply_pending() == 3

    env = package_env()
    expected = {bot.pk: env.create_rating() for bot in bots}
    for table in tables:
        scores = [score for _, score in table]
        ranks = [1 + sum(other > s for other in scores) for s in scores]
        groups = [(expected[bot.pk],) for bot, _ in table]
        for (bot, _), (new,) in zip(table, env.rate(groups, ranks=ranks), strict=True):
            expected[bot.pk] = new
    for bot in bots:
        rating = Rating.objects.get(bot=bot)
        assert rating.mu == pytest.approx(expected[bot.pk].mu, abs=1e-9)
        assert rating.sigma == pytest.approx(expected[bot.pk].sigma, abs=1e-9)
        assert rating.conservative == pytest.approx(rating.mu - 3 * rating.sigma)


def test_a_disqualified_bot_ranks_last_whatever_its_score(bots, finished) -> None:
    a, b, c, _, _ = bots
    finished([(a, 90, True), (b, 10), (c, 20)])
    ratings_apply_pending()
    env = package_env()
    r = env.create_rating()
    (ra,), (_rb,), (rc,) = env.rate([(r,), (r,), (r,)], ranks=[3, 2, 1])
    assert Rating.objects.get(bot=a).mu == pytest.approx(ra.mu)
    assert Rating.objects.get(bot=c).mu == pytest.approx(rc.mu)
    assert Rating.objects.get(bot=a).mu < Rating.objects.get(bot=b).mu


def test_each_match_is_rated_once_however_often_the_update_runs(bots, finished) -> None:
    for i in range(4):
        finished([(bots[i], 10 * i), (bots[i + 1], 5), (bots[(i + 2) % 5], 7)])
    assert ratings_apply_pending() == 4
    snapshot = list(Rating.objects.order_by("bot_id").values_list("mu", "sigma", "matches"))
    assert ratings_apply_pending() == 0
    assert ratings_apply_pending() == 0
    assert list(Rating.objects.order_by("bot_id").values_list("mu", "sigma", "matches")) == snapshot
    assert RatingHistory.objects.count() == 12
    sequences = list(
        Match.objects.order_by("rating_sequence").values_list("rating_sequence", flat=True)
    )
    assert sequences == [1, 2, 3, 4]


def test_failed_and_unfinished_matches_are_never_rated(bots, finished) -> None:
    finished([(bots[0], 10), (bots[1], 5), (bots[2], 1)], status=MatchStatus.FAILED)
    finished([(bots[0], 10), (bots[1], 5), (bots[2], 1)], status=MatchStatus.CANCELLED)
    assert ratings_apply_pending() == 0
    assert not Rating.objects.exists()


def test_a_recompute_from_stored_results_gives_identical_numbers(bots, finished) -> None:
    for i in range(12):
        table = [(bots[(i + k) % 5], (i * 7 + k * 13) % 40) for k in range(3 + i % 3)]
        finished(table)
    ratings_apply_pending()
    before = list(Rating.objects.order_by("bot_id").values_list("bot_id", "mu", "sigma", "matches"))
    history = list(
        RatingHistory.objects.order_by("sequence", "bot_id").values_list(
            "bot_id", "sequence", "mu_before", "mu_after", "sigma_after"
        )
    )
    seen = []
    assert ratings_recompute(progress=lambda done, total: seen.append((done, total))) == 12
    assert seen[-1] == (12, 12)
    after = list(Rating.objects.order_by("bot_id").values_list("bot_id", "mu", "sigma", "matches"))
    assert after == before
    assert (
        list(
            RatingHistory.objects.order_by("sequence", "bot_id").values_list(
                "bot_id", "sequence", "mu_before", "mu_after", "sigma_after"
            )
        )
        == history
    )


def test_the_rating_on_a_date_is_the_one_after_the_last_match_before_it(bots, finished) -> None:
    first = finished([(bots[0], 10), (bots[1], 5), (bots[2], 1)])
    second = finished([(bots[0], 1), (bots[1], 5), (bots[2], 10)])
    ratings_apply_pending()
    variant = first.variant
    between = first.finished_at + timedelta(seconds=1)
    assert (
        rating_on(bot_id=bots[0].pk, variant=variant, when=first.finished_at - timedelta(1)) is None
    )
    at_first = rating_on(bot_id=bots[0].pk, variant=variant, when=between)
    at_second = rating_on(bot_id=bots[0].pk, variant=variant, when=second.finished_at)
    assert at_first is not None and at_second is not None
    assert at_first["match"] == first.pk and at_second["match"] == second.pk
    assert at_first["mu"] > at_second["mu"]


def test_the_leaderboard_orders_by_conservative_rating_and_can_hide_provisional(
    bots, finished, settings
) -> None:
    settings.RATING_PROVISIONAL_MATCHES = 2
    finished([(bots[0], 30), (bots[1], 20), (bots[2], 10)])
    finished([(bots[0], 30), (bots[1], 20), (bots[3], 10)])
    ratings_apply_pending()
    board = list(leaderboard(variant=Match.objects.earliest("pk").variant))
    values = [r.conservative for r in board]
    assert values == sorted(values, reverse=True)
    assert board[0].bot == bots[0]
    established = list(leaderboard(variant=board[0].variant, include_provisional=False))
    assert {r.bot for r in established} == {bots[0], bots[1]}


def test_the_recompute_command_rebuilds_the_same_ratings(bots, finished) -> None:
    from io import StringIO

    from django.core.management import call_command

    for i in range(3):
        finished([(bots[i], 10), (bots[i + 1], 20), (bots[i + 2], 30)])
    ratings_apply_pending()
    before = list(Rating.objects.order_by("bot_id").values_list("mu", "sigma", "matches"))
    out = StringIO()
    call_command("recompute_ratings", stdout=out)
    assert "Recomputed 3 rated matches" in out.getvalue()
    assert list(Rating.objects.order_by("bot_id").values_list("mu", "sigma", "matches")) == before


@pytest.fixture
def duplicate_group(bots, oh_hell, organiser):
    """Four rotations of one deal: seat luck dwarfs skill, and skill orders a > b > c > d."""
    from tournaments.formats import rotations
    from tournaments.models import Replay, Tournament

    tournament = Tournament.objects.create(
        name="dup",
        organiser=organiser,
        variant=oh_hell,
        format="duplicate",
        status="running",
        rated=True,
    )
    a, b, c, d = bots[:4]
    skill = {a.pk: 3, b.pk: 1, c.pk: 0, d.pk: -2}
    luck = [40, 10, 0, -5]

    def play(seating, status=MatchStatus.FINISHED, minute=0):
        when = timezone.now() - timedelta(hours=1) + timedelta(minutes=minute)
        match = Match.objects.create(
            variant=oh_hell,
            tournament=tournament,
            duplicate_group="0.0",
            status=status,
            started_at=when,
            finished_at=when if status == MatchStatus.FINISHED else None,
        )
        scores = [luck[s] + skill[bot.pk] for s, bot in enumerate(seating)]
        for seat, bot in enumerate(seating):
            MatchSeat.objects.create(match=match, seat=seat, bot=bot, score=2 * scores[seat])
        if status == MatchStatus.FINISHED:
            deals = [{"scores": scores}, {"scores": scores}]
            Replay.objects.create(match=match, data={"players": 4, "deals": deals})
        return match

    return [a, b, c, d], rotations, play


def test_a_duplicate_group_is_rated_as_one_update_by_the_deal_by_deal_comparison(
    duplicate_group,
) -> None:
    (a, b, c, d), rotations, play = duplicate_group
    matches = [play(seating, minute=i) for i, seating in enumerate(rotations([a, b, c, d]))]
    assert ratings_apply_pending() == 4
    env = package_env()
    r = env.create_rating()
    expected = env.rate([(r,), (r,), (r,), (r,)], ranks=[1, 2, 3, 4])
    for bot, (new,) in zip((a, b, c, d), expected, strict=True):
        rating = Rating.objects.get(bot=bot)
        assert rating.matches == 1
        assert rating.mu == pytest.approx(new.mu, abs=1e-9)
    assert RatingHistory.objects.filter(match=matches[0]).count() == 4
    assert RatingHistory.objects.count() == 4
    groups = set(Match.objects.values_list("rating_group", flat=True))
    assert len(groups) == 1 and groups.pop() == f"{matches[0].tournament_id}:0.0#1"


def test_a_duplicate_group_waits_for_its_last_rotation(duplicate_group) -> None:
    (a, b, c, d), rotations, play = duplicate_group
    seatings = rotations([a, b, c, d])
    for i, seating in enumerate(seatings[:3]):
        play(seating, minute=i)
    last = play(seatings[3], status=MatchStatus.QUEUED)
    assert ratings_apply_pending() == 0
    assert not Rating.objects.exists()
    Match.objects.filter(pk=last.pk).update(status=MatchStatus.FAILED, finished_at=timezone.now())
    assert ratings_apply_pending() == 3
    assert Rating.objects.get(bot=a).matches == 1


def test_a_recompute_rates_duplicate_groups_exactly_as_before(duplicate_group, finished) -> None:
    (a, b, c, d), rotations, play = duplicate_group
    finished([(a, 5), (b, 9), (c, 1)])
    for i, seating in enumerate(rotations([a, b, c, d])):
        play(seating, minute=10 + i)
    finished([(d, 5), (b, 9), (c, 1)])
    ratings_apply_pending()
    before = list(Rating.objects.order_by("bot_id").values_list("mu", "sigma", "matches"))
    history = list(
        RatingHistory.objects.order_by("sequence", "bot_id").values_list(
            "match_id", "bot_id", "mu_after"
        )
    )
    ratings_recompute()
    assert list(Rating.objects.order_by("bot_id").values_list("mu", "sigma", "matches")) == before
    assert (
        list(
            RatingHistory.objects.order_by("sequence", "bot_id").values_list(
                "match_id", "bot_id", "mu_after"
            )
        )
        == history
    )


def test_each_rated_match_writes_one_log_line_once_its_rating_is_committed(
    bots, finished, caplog, django_capture_on_commit_callbacks
) -> None:
    matches = [finished([(bots[i], 10), (bots[i + 1], 5)]) for i in range(3)]
    with (
        caplog.at_level("INFO", logger="tournaments.services.ratings"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        ratings_apply_pending()
    lines = [r for r in caplog.records if r.getMessage() == "match rated"]
    assert sorted(r.match_id for r in lines) == sorted(m.pk for m in matches)
    assert sorted(r.rating_sequence for r in lines) == [1, 2, 3]
