"""The stored batch ranks: fitted from the rated matches as the live writer ranks them,
replaced whole, kept while nothing changed, and fitted again after a recompute."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from config.celery_app import route_task
from tournaments.dispatch import Task
from tournaments.maths.intervals import Finish, strengths
from tournaments.models import (
    Match,
    MatchSeat,
    MatchStatus,
    RankFit,
    RankInterval,
    RatingRecompute,
)
from tournaments.services.rank_intervals import rank_intervals_fit, rank_intervals_fit_all
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.recompute import ratings_recompute_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def bots(make_bot, owner):
    return [make_bot(owner, status="active") for _ in range(5)]


@pytest.fixture
def play(oh_hell):
    """Finish a match with the given (bot, score[, disqualified]) per seat and rate it."""
    clock = iter(range(1, 100_000))

    def make(rows: list[tuple]) -> Match:
        when = timezone.now() - timedelta(days=1) + timedelta(minutes=next(clock))
        match = Match.objects.create(
            variant=oh_hell, status=MatchStatus.FINISHED, finished_at=when, started_at=when
        )
        for seat, (bot, score, *dq) in enumerate(rows):
            MatchSeat.objects.create(
                match=match, seat=seat, bot=bot, score=score, rank=1, disqualified=bool(dq)
            )
        return match

    return make


def _season(play, bots, count: int, seed: int = 1) -> None:
    """``count`` rated four-bot matches: earlier bots score more, often, and ties happen."""
    rng = random.Random(seed)
    for _ in range(count):
        table = rng.sample(bots, 4)
        play([(b, rng.randrange(0, 5) * 10 + 10 * (len(bots) - bots.index(b))) for b in table])
    ratings_apply_pending()


def _stored(variant) -> list[tuple]:
    return list(
        RankInterval.objects.filter(fit__variant=variant)
        .order_by("rank", "bot_id")
        .values_list("bot_id", "rank", "low", "high", "strength", "matches")
    )


def test_a_fit_ranks_every_bot_as_a_fit_of_the_rated_finishing_orders_here(
    play, bots, oh_hell, settings
) -> None:
    settings.RANK_INTERVALS_RESAMPLES = 30
    _season(play, bots, 40)
    a, b, c = bots[:3]
    play([(a, 30), (b, 30), (c, 10, True)])  # a tie, and a disqualified seat ranked last
    ratings_apply_pending()
    assert rank_intervals_fit(variant_id=oh_hell.pk) is True

    # The finishing orders, read here from the seats: by score, disqualified seats last.
    finishes = []
    for match in Match.objects.filter(rated=True):
        seats = list(match.seats.order_by("seat"))
        kept = [s.score or 0 for s in seats if not s.disqualified]
        places = tuple(
            len(kept) + 1 if s.disqualified else 1 + sum(o > (s.score or 0) for o in kept)
            for s in seats
        )
        finishes.append(Finish(bots=tuple(s.bot_id for s in seats), places=places))
    fitted = strengths(finishes)
    order = sorted(fitted, key=lambda bot: -fitted[bot])

    fit = RankFit.objects.get(variant=oh_hell)
    assert fit.matches == 41 and fit.resamples == 30
    rows = _stored(oh_hell)
    assert [bot for bot, *_ in rows] == order
    for bot, rank, low, high, strength, matches in rows:
        assert rank == order.index(bot) + 1
        assert strength == pytest.approx(fitted[bot], abs=1e-5)
        assert matches == sum(bot in f.bots for f in finishes)
        assert 1 <= low <= high <= len(bots)
    assert rows[0][0] == bots[0].pk  # the planted best


def test_a_bot_with_too_few_matches_has_a_rank_but_no_interval(
    play, bots, oh_hell, settings
) -> None:
    settings.RANK_INTERVALS_RESAMPLES = 20
    _season(play, bots[:4], 12)
    newcomer = bots[4]
    for _ in range(3):
        play([(newcomer, 90), (bots[0], 10), (bots[1], 0)])
    ratings_apply_pending()
    rank_intervals_fit(variant_id=oh_hell.pk)
    row = RankInterval.objects.get(bot=newcomer)
    assert row.matches == 3 < settings.RANK_INTERVALS_MIN_MATCHES
    assert row.low is None and row.high is None
    assert row.text.endswith("; too few matches for an interval")
    assert RankInterval.objects.exclude(bot=newcomer).filter(low__isnull=True).count() == 0


def test_a_fit_takes_only_the_latest_matches_up_to_the_cap(play, bots, oh_hell, settings) -> None:
    settings.RANK_INTERVALS_RESAMPLES = 20
    settings.RANK_INTERVALS_MAX_MATCHES = 12
    gone = bots[4]
    for _ in range(5):
        play([(gone, 50), (bots[0], 0), (bots[1], 10)])
    _season(play, bots[:4], 12)
    rank_intervals_fit(variant_id=oh_hell.pk)
    assert RankFit.objects.get(variant=oh_hell).matches == 12
    assert not RankInterval.objects.filter(bot=gone).exists()
    assert sum(row[5] for row in _stored(oh_hell)) == 12 * 4


def test_an_unchanged_history_keeps_its_fit_and_a_new_match_replaces_it_whole(
    play, bots, oh_hell, settings
) -> None:
    settings.RANK_INTERVALS_RESAMPLES = 20
    _season(play, bots, 20)
    assert rank_intervals_fit_all() == {"fitted": 1, "current": 0}
    first = RankFit.objects.get(variant=oh_hell)
    rows = _stored(oh_hell)
    assert rank_intervals_fit_all() == {"fitted": 0, "current": 1}
    assert RankFit.objects.get(variant=oh_hell).pk == first.pk

    # The same history fitted afresh gives the same numbers: the resamples are seeded by it.
    RankFit.objects.all().delete()
    assert rank_intervals_fit(variant_id=oh_hell.pk) is True
    assert _stored(oh_hell) == rows

    play([(bots[4], 90), (bots[0], 0), (bots[1], 10)])
    ratings_apply_pending()
    assert rank_intervals_fit_all() == {"fitted": 1, "current": 0}
    assert RankFit.objects.count() == 1
    assert RankFit.objects.get(variant=oh_hell).matches == 21
    assert RankInterval.objects.count() == len(bots)


def test_a_variant_without_rated_matches_has_no_fit(oh_hell) -> None:
    assert rank_intervals_fit(variant_id=oh_hell.pk) is False
    assert rank_intervals_fit_all() == {"fitted": 0, "current": 0}
    assert not RankFit.objects.exists()


def test_a_finished_recompute_fits_the_ranks_through_dispatch(
    play, bots, oh_hell, settings, django_capture_on_commit_callbacks
) -> None:
    settings.RANK_INTERVALS_RESAMPLES = 20
    _season(play, bots, 15)
    job = RatingRecompute.objects.create()
    with (
        override_settings(CELERY_TASK_ALWAYS_EAGER=True),
        django_capture_on_commit_callbacks(execute=True) as callbacks,
    ):
        assert ratings_recompute_job(recompute_id=job.pk) == "finished"
    assert callbacks  # sent after the commit, and run (in-process) as a worker would
    fit = RankFit.objects.get(variant=oh_hell)
    assert fit.matches == 15
    assert RankInterval.objects.filter(fit=fit).count() == len(bots)


def test_the_fit_runs_on_the_bulk_queue_on_a_schedule() -> None:
    route = route_task(Task.FIT_RANK_INTERVALS.value, (), {}, {})
    assert route == {"queue": f"{settings.CELERY_TASK_DEFAULT_QUEUE}.bulk"}
    entry = settings.CELERY_BEAT_SCHEDULE["fit-rank-intervals"]
    assert entry["task"] == Task.FIT_RANK_INTERVALS.value
    assert entry["schedule"] == float(settings.RANK_INTERVALS_SECONDS)


def test_an_unrated_tournaments_matches_are_not_fitted(play, bots, oh_hell, organiser) -> None:
    from tournaments.models import Tournament

    unrated = Tournament.objects.create(
        name="friendly", organiser=organiser, variant=oh_hell, format="round_robin"
    )
    for _ in range(3):
        match = play([(b, 10 * i) for i, b in enumerate(bots[:4])])
        Match.objects.filter(pk=match.pk).update(tournament=unrated)
    ratings_apply_pending()
    assert Match.objects.filter(tournament=unrated, rated=True).count() == 3
    assert rank_intervals_fit_all() == {"fitted": 0, "current": 0}
    assert not RankFit.objects.exists()
