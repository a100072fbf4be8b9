"""A bot's analytics, checked against figures worked out here from the stored replays."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.support.world import World, build_world, play_and_record, queue_match
from tournaments.cache_keys import bot_analytics_key
from tournaments.models import (
    Bot,
    Match,
    MatchSeat,
    MatchStatus,
    RatingHistory,
    Replay,
    Scrimmage,
    SeatTally,
    Variant,
)
from tournaments.selectors import analytics
from tournaments.services.analytics import seat_tallies_write
from tournaments.services.matches import match_create
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.runs import match_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(presets: Any) -> World:
    owners = [
        User.objects.create_user(username=name, password="a-long-test-passphrase-42")
        for name in ("ada", "brian")
    ]
    return build_world(owners=owners, bots=6, finished=14, queued=2)


def _get(bot: Bot, **params: str) -> dict[str, Any]:
    response = APIClient().get(f"/api/bots/{bot.pk}/analytics/", params)
    assert response.status_code == 200, response.content
    return response.json()


def _from_replays(bot: Bot) -> dict[str, Any]:
    """Everything the analytics show, worked out from the replay JSON and the seats alone."""
    hands: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    places: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    opponents: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    mine = MatchSeat.objects.filter(bot=bot, match__status=MatchStatus.FINISHED)
    for seat in mine.select_related("match"):
        replay = Replay.objects.get(match=seat.match).data
        n = replay["players"]
        for deal in replay["deals"]:
            bid = deal["bids"][seat.seat]
            made = bid == deal["tricks_won"][seat.seat]
            score = deal["scores"][seat.seat]
            # Seats after the dealer clockwise, the dealer himself being 0.
            after = (seat.seat - deal["dealer"]) % n
            for tally in (hands[deal["hand_size"]], places[(n, after)]):
                tally[0] += 1
                tally[1] += made
                tally[2] += score
        names = {s.seat: s.bot.name for s in seat.match.seats.select_related("bot")}
        for other in range(n):
            if other == seat.seat:
                continue
            line = opponents[names[other]]
            mine_total, theirs = replay["totals"][seat.seat], replay["totals"][other]
            line[0] += 1
            line[1 if mine_total > theirs else 2 if mine_total == theirs else 3] += 1
    return {"hands": hands, "places": places, "opponents": opponents}


def _hands(body: dict[str, Any]) -> dict[int, list[int]]:
    return {r["hand_size"]: [r["deals"], r["exact"], r["points"]] for r in body["by_hand_size"]}


def test_the_analytics_agree_with_a_count_made_from_the_stored_replays(world: World) -> None:
    bot = world.bots[0]
    body = _get(bot, variant="oh-hell")
    expected = _from_replays(bot)
    got_hands = {
        r["hand_size"]: [r["deals"], r["exact"], r["points"]] for r in body["by_hand_size"]
    }
    assert got_hands == dict(expected["hands"]) and len(got_hands) > 3
    got_places = {
        (r["players"], r["after_dealer"]): [r["deals"], r["exact"], r["points"]]
        for r in body["by_place"]
    }
    assert got_places == dict(expected["places"]) and len(got_places) == 4
    # Bidding order: first to bid, ..., the dealer last.
    assert [r["after_dealer"] for r in body["by_place"]] == [1, 2, 3, 0]
    assert body["by_place"][-1]["place"] == "dealer (bids last)"
    deals = sum(v[0] for v in expected["hands"].values())
    exact = sum(v[1] for v in expected["hands"].values())
    points = sum(v[2] for v in expected["hands"].values())
    assert (body["deals"], body["exact"], body["points"]) == (deals, exact, points)
    assert body["exact_rate"] == pytest.approx(exact / deals)
    assert body["points_per_deal"] == pytest.approx(points / deals)
    for row in body["by_hand_size"]:
        assert row["exact_rate"] == pytest.approx(row["exact"] / row["deals"])
        assert row["points_per_deal"] == pytest.approx(row["points"] / row["deals"])
    got_opponents = {
        r["bot_name"]: [r["tables"], r["ahead"], r["level"], r["behind"]] for r in body["opponents"]
    }
    assert got_opponents == dict(expected["opponents"]) and len(got_opponents) >= 3
    tables = [r["tables"] for r in body["opponents"]]
    assert tables == sorted(tables, reverse=True)
    finished = MatchSeat.objects.filter(bot=bot, match__status=MatchStatus.FINISHED).count()
    assert body["matches"] == finished
    assert body["variants"] == [{"variant": "oh-hell", "matches": finished}]


def test_faults_are_counted_by_a_period_that_fits_the_span_of_play(world: World) -> None:
    bot = Bot.objects.get(pk=MatchSeat.objects.filter(faults__gt=0).values("bot_id")[:1])
    body = _get(bot)
    seats = MatchSeat.objects.filter(bot=bot, match__status=MatchStatus.FINISHED)
    times = [s.match.finished_at for s in seats.select_related("match") if s.match.finished_at]
    # The world's matches end five minutes apart, within an hour or two: counted by the hour.
    assert body["fault_period"] == "hour"
    hours: dict[datetime, list[int]] = defaultdict(lambda: [0, 0])
    for seat in seats.select_related("match"):
        assert seat.match.finished_at is not None
        start = seat.match.finished_at.replace(minute=0, second=0, microsecond=0)
        hours[start][0] += 1
        hours[start][1] += seat.faults
    got = {datetime.fromisoformat(p["start"]): [p["matches"], p["faults"]] for p in body["faults"]}
    assert got == dict(hours)
    assert sum(v[1] for v in got.values()) > 0 and len(times) == sum(v[0] for v in got.values())
    starts = [p["start"] for p in body["faults"]]
    assert starts == sorted(starts)


@pytest.mark.parametrize(
    ("span_s", "period"),
    [
        (0, "minute"),
        (600, "minute"),
        (3600, "hour"),
        (3 * 86400, "day"),
        (60 * 86400, "week"),
        (400 * 86400, "month"),
    ],
)
def test_the_fault_period_grows_with_the_span(span_s: float, period: str) -> None:
    assert analytics.fault_period_for(span_s) == period


def test_the_rating_over_matches_is_the_history_numbered_by_match(world: World) -> None:
    bot = world.bots[0]
    history = list(
        RatingHistory.objects.filter(bot=bot, variant=world.variant).order_by("sequence")
    )
    body = _get(bot)
    assert body["rated_matches"] == len(history) > 3
    assert [p["match"] for p in body["rating"]] == list(range(len(history) + 1))
    start = body["rating"][0]
    assert (start["mu"], start["sigma"]) == pytest.approx(
        (history[0].mu_before, history[0].sigma_before)
    )
    for point, row in zip(body["rating"][1:], history, strict=True):
        assert point["mu"] == pytest.approx(row.mu_after)
        assert point["sigma"] == pytest.approx(row.sigma_after)
        assert point["conservative"] == pytest.approx(row.mu_after - 3 * row.sigma_after)


def test_a_long_history_is_drawn_from_evenly_spread_matches_and_the_latest(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = world.bots[0]
    total = RatingHistory.objects.filter(bot=bot).count()
    assert total >= 7
    monkeypatch.setattr(analytics, "RATING_POINTS", 3)
    step = -(-total // 3)
    body = _get(bot)
    wanted = [0, *sorted({*range(1, total + 1, step), total})]
    assert [p["match"] for p in body["rating"]] == wanted
    assert body["rated_matches"] == total


def test_reading_the_analytics_reads_no_replay_and_a_second_read_comes_from_the_cache(
    world: World,
) -> None:
    bot = world.bots[0]
    with CaptureQueriesContext(connection) as first:
        body = _get(bot)
    assert first.captured_queries
    assert not [q for q in first.captured_queries if "tournaments_replay" in q["sql"]]
    with CaptureQueriesContext(connection) as second:
        assert _get(bot) == body
    # The bot, its variants and the variant: the analytics themselves come from the cache.
    assert len(second.captured_queries) <= 3 < len(first.captured_queries)


def test_recording_a_match_through_the_outcome_service_tallies_it_and_drops_the_cache(
    playing_bots: Any, short_variant: Any, django_capture_on_commit_callbacks: Any
) -> None:
    bots = playing_bots(4)
    first = match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=11, time_limit_ms=500
    )
    assert match_run(match_id=first.pk) == "recorded"
    before = _get(bots[0], variant=short_variant.name)
    assert before["matches"] == 1
    second = match_create(
        variant_id=short_variant.pk, bot_ids=[b.pk for b in bots], seed=12, time_limit_ms=500
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert match_run(match_id=second.pk) == "recorded"
    after = _get(bots[0], variant=short_variant.name)
    assert after["matches"] == 2  # not the cached figures of one match
    expected = _from_replays(bots[0])
    assert {
        r["hand_size"]: [r["deals"], r["exact"], r["points"]] for r in after["by_hand_size"]
    } == (dict(expected["hands"]))
    assert after["deals"] == 2 * 3  # three deals of at most three cards each


def test_the_backfill_tallies_matches_recorded_before_tallies_and_only_once(world: World) -> None:
    bot = world.bots[0]
    before = _get(bot)
    rows = SeatTally.objects.count()
    SeatTally.objects.all().delete()
    cache.delete(bot_analytics_key(bot.pk, world.variant.pk))
    assert _get(bot)["deals"] == 0
    call_command("backfill_analytics", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert SeatTally.objects.count() == rows
    cache.delete(bot_analytics_key(bot.pk, world.variant.pk))
    assert _get(bot) == before
    call_command("backfill_analytics", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert SeatTally.objects.count() == rows


def test_only_finished_matches_count(world: World) -> None:
    bot = world.bots[0]
    finished = Match.objects.filter(seats__bot=bot, status=MatchStatus.FINISHED).count()
    assert Match.objects.filter(seats__bot=bot).exclude(status=MatchStatus.FINISHED).exists()
    assert _get(bot)["matches"] == finished


def test_a_bot_without_matches_and_bad_requests(world: World, make_bot: Any) -> None:
    idle = make_bot(world.bots[0].owner)
    assert _get(idle) == {"bot": idle.pk, "variant": None, "variants": []}
    empty = _get(idle, variant="oh-hell")
    assert (empty["matches"], empty["deals"], empty["rating"]) == (0, 0, [])
    response = APIClient().get(f"/api/bots/{idle.pk}/analytics/", {"variant": "no-such-game"})
    assert response.status_code == 400 and "variant" in response.json()["error"]["detail"]
    assert APIClient().get("/api/bots/999999/analytics/").status_code == 404
    assert APIClient().get(f"/api/bots/{10**20}/analytics/").status_code == 404


def test_rating_a_match_drops_the_bots_cached_analytics(
    world: World, django_capture_on_commit_callbacks: Any
) -> None:
    bot = world.bots[0]
    before = _get(bot)
    match = queue_match(world.tournament, world.bots[:4], round_=99)
    play_and_record(match)  # its own drop of the cache waits for a commit that never comes here
    assert _get(bot)["matches"] == before["matches"]  # the analytics come from the cache
    with django_capture_on_commit_callbacks(execute=True):
        ratings_apply_pending()
    after = _get(bot)
    assert after["rated_matches"] == before["rated_matches"] + 1
    assert after["matches"] == before["matches"] + 1


def _scrimmage_match(bot: Bot, opponents: list[Bot], variant: Variant) -> Match:
    """A queued match of a scrimmage of ``bot``, seated last, against ``opponents``."""
    scrimmage = Scrimmage.objects.create(
        owner=bot.owner, bot=bot, variant=variant, match_count=1, time_limit_ms=500
    )
    return match_create(
        variant_id=variant.pk,
        bot_ids=[o.pk for o in opponents] + [bot.pk],
        seed=5,
        time_limit_ms=500,
        scrimmage=scrimmage,
        round=0,
    )


def test_a_scrimmage_leaves_the_bots_public_analytics_as_they_were(
    world: World, short_variant: Variant
) -> None:
    bot, opponents = world.bots[0], world.bots[1:4]
    before = (_get(bot), _get(bot, variant=world.variant.name))
    assert _get(bot, variant=short_variant.name)["matches"] == 0
    # A scrimmage in the variant it plays (with faults of its own, finished now) and one in a
    # variant it has not played in public.
    play_and_record(_scrimmage_match(bot, opponents, world.variant), faults=True)
    play_and_record(_scrimmage_match(bot, opponents, short_variant))
    for variant in (world.variant, short_variant):
        cache.delete(bot_analytics_key(bot.pk, variant.pk))
    assert (_get(bot), _get(bot, variant=world.variant.name)) == before
    assert _get(bot, variant=short_variant.name)["matches"] == 0
    # Its opponents' analytics leave it out too.
    opponent = opponents[0]
    assert _get(opponent, variant=short_variant.name)["matches"] == 0
    assert not SeatTally.objects.filter(seat__match__scrimmage__isnull=False).exists()


def test_a_scrimmage_match_is_not_tallied_nor_backfilled(world: World) -> None:
    bot = world.bots[0]
    before = _get(bot)
    match = _scrimmage_match(bot, world.bots[1:4], world.variant)
    play_and_record(match)
    replay = Replay.objects.get(match=match).data
    assert seat_tallies_write(match=match, seats=match.seats.all(), replay=replay) == 0
    SeatTally.objects.all().delete()
    call_command("backfill_analytics", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert not SeatTally.objects.filter(seat__match=match).exists()
    cache.delete(bot_analytics_key(bot.pk, world.variant.pk))
    assert _get(bot) == before
