"""The rating endpoints: leaderboard, a bot's ratings and history, ratings on a date, recompute."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import quote

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.support.api import error_of
from tournaments.models import (
    BotStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingHistory,
    RatingRecompute,
    Variant,
)
from tournaments.services.ratings import ratings_apply_pending

DAY_ONE = timezone.now().replace(microsecond=0) - timedelta(days=10)


@pytest.fixture
def players(make_bot, owner):
    return [make_bot(owner, status=BotStatus.ACTIVE) for _ in range(4)]


def play(bots, scores, *, when, variant):
    """Store a finished match with these scores, as the arena would record it."""
    match = Match.objects.create(
        variant=variant, status=MatchStatus.FINISHED, started_at=when, finished_at=when
    )
    for seat, (bot, score) in enumerate(zip(bots, scores, strict=True)):
        MatchSeat.objects.create(match=match, seat=seat, bot=bot, score=score, rank=1)
    return match


@pytest.fixture
def rated(players, oh_hell):
    """Three rated oh-hell matches a day apart, the first bot winning each; one in blackout."""
    for day in range(3):
        play(players[:3], [30, 20, 10], when=DAY_ONE + timedelta(days=day), variant=oh_hell)
    blackout = Variant.objects.get(name="blackout")
    play(players[1:4], [5, 50, 0], when=DAY_ONE + timedelta(days=1), variant=blackout)
    assert ratings_apply_pending() == 4
    return players


def test_the_rating_pages_render_in_the_browsable_api(anonymous_client, rated) -> None:
    bot = rated[0]
    for url in (
        "/api/leaderboard/?variant=oh-hell&format=api",
        "/api/leaderboard/?variant=oh-hell&format=api&page_size=1&page=2",
        f"/api/bots/{bot.pk}/rating-history/?format=api",
        f"/api/bots/{bot.pk}/ratings/?format=api",
    ):
        response = anonymous_client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"].startswith("text/html"), url
    page = anonymous_client.get("/api/leaderboard/?variant=oh-hell", HTTP_ACCEPT="text/html")
    assert page.status_code == 200 and bot.name in page.content.decode()


class TestLeaderboard:
    def test_the_leaderboard_ranks_by_conservative_rating_with_uncertainty(
        self, anonymous_client, rated
    ) -> None:
        response = anonymous_client.get("/api/leaderboard/?variant=oh-hell")
        assert response.status_code == 200
        body = response.json()
        assert body["count"] == 3
        rows = body["results"]
        assert [r["rank"] for r in rows] == [1, 2, 3]
        assert [r["bot"] for r in rows] == [b.pk for b in rated[:3]]
        top = Rating.objects.get(bot=rated[0], variant__name="oh-hell")
        assert rows[0]["mu"] == pytest.approx(top.mu)
        assert rows[0]["sigma"] == pytest.approx(top.sigma)
        assert rows[0]["conservative"] == pytest.approx(top.mu - 3 * top.sigma)
        assert (rows[0]["matches"], rows[0]["provisional"], rows[0]["owner"]) == (3, True, "owner")
        assert rows[0]["bot_name"] == rated[0].name

    def test_rank_counts_from_the_top_across_pages_and_the_variant_may_be_an_id(
        self, anonymous_client, rated, oh_hell
    ) -> None:
        body = anonymous_client.get(f"/api/leaderboard/?variant={oh_hell.pk}&page=2&page_size=2")
        rows = body.json()["results"]
        assert [(r["rank"], r["bot"]) for r in rows] == [(3, rated[2].pk)]

    def test_provisional_bots_can_be_hidden(self, anonymous_client, rated, settings) -> None:
        settings.RATING_PROVISIONAL_MATCHES = 3
        Rating.objects.filter(bot=rated[2], variant__name="oh-hell").update(matches=2)
        url = "/api/leaderboard/?variant=oh-hell"
        assert anonymous_client.get(url).json()["count"] == 3
        body = anonymous_client.get(f"{url}&include_provisional=false").json()
        assert [r["bot"] for r in body["results"]] == [rated[0].pk, rated[1].pk]
        assert not any(r["provisional"] for r in body["results"])

    @pytest.mark.parametrize(
        ("query", "field"),
        [
            ("", "variant"),
            ("variant=", "variant"),
            ("variant=no-such-variant", "variant"),
            ("variant=999999999999999999999999", "variant"),
            ("variant=" + "v" * 5000, "variant"),
            ("variant=oh-hell&include_provisional=perhaps", "include_provisional"),
            ("variant=oh%00hell", "variant"),
            ("variant=oh-hell&page_size=0", "page_size"),
        ],
    )
    def test_a_bad_query_is_a_400_naming_the_parameter(
        self, anonymous_client, query, field
    ) -> None:
        response = anonymous_client.get(f"/api/leaderboard/?{query}")
        assert response.status_code == 400
        assert field in error_of(response)["detail"]

    @pytest.mark.parametrize("query", ["page=0", "page=99", "page_size=99999999"])
    def test_odd_pages_never_answer_500(self, anonymous_client, rated, query) -> None:
        response = anonymous_client.get(f"/api/leaderboard/?variant=oh-hell&{query}")
        assert response.status_code in (200, 404)
        if response.status_code == 404:
            error_of(response)

    def test_the_leaderboard_makes_the_same_queries_for_5_or_50_bots(
        self, anonymous_client, make_bot, owner, oh_hell, settings
    ) -> None:
        settings.LEADERBOARD_CACHE_SECONDS = 0  # the pages as read from the database

        def add(n):
            for i in range(n):
                Rating.objects.create(bot=make_bot(owner), variant=oh_hell, mu=20 + i)

        add(5)
        with CaptureQueriesContext(connection) as few:
            assert (
                len(anonymous_client.get("/api/leaderboard/?variant=oh-hell").json()["results"])
                == 5
            )
        add(45)
        with CaptureQueriesContext(connection) as many:
            assert (
                len(anonymous_client.get("/api/leaderboard/?variant=oh-hell").json()["results"])
                == 50
            )
        assert len(many) == len(few)


class TestBotRatings:
    def test_a_bot_has_a_rating_per_variant(self, anonymous_client, rated) -> None:
        body = anonymous_client.get(f"/api/bots/{rated[1].pk}/ratings/").json()
        assert [r["variant"] for r in body] == ["blackout", "oh-hell"]
        blackout = Rating.objects.get(bot=rated[1], variant__name="blackout")
        assert body[0]["mu"] == pytest.approx(blackout.mu) and body[0]["matches"] == 1
        assert body[0]["conservative"] == pytest.approx(blackout.conservative)

    def test_the_ratings_on_a_date_are_those_after_the_last_match_before_it(
        self, anonymous_client, rated
    ) -> None:
        bot = rated[0]
        second_day = DAY_ONE + timedelta(days=1, hours=12)
        body = anonymous_client.get(
            f"/api/bots/{bot.pk}/ratings/?at={quote(second_day.isoformat())}"
        ).json()
        history = list(RatingHistory.objects.filter(bot=bot).order_by("sequence"))
        assert len(body) == 1 and body[0]["variant"] == "oh-hell"
        assert body[0]["mu"] == pytest.approx(history[1].mu_after)
        assert body[0]["sigma"] == pytest.approx(history[1].sigma_after)
        assert (body[0]["matches"], body[0]["match"]) == (2, history[1].match_id)
        before = anonymous_client.get(
            f"/api/bots/{bot.pk}/ratings/?at={quote((DAY_ONE - timedelta(days=1)).isoformat())}"
        )
        assert before.json() == []

    def test_the_history_lists_every_update_with_before_and_after(
        self, anonymous_client, rated
    ) -> None:
        bot = rated[1]
        body = anonymous_client.get(f"/api/bots/{bot.pk}/rating-history/").json()
        assert body["count"] == 4
        rows = body["results"]
        assert {r["variant"] for r in rows} == {"oh-hell", "blackout"}
        first = RatingHistory.objects.get(bot=bot, match_id=rows[0]["match"])
        assert rows[0]["mu_before"] == pytest.approx(first.mu_before)
        assert rows[0]["sigma_after"] == pytest.approx(first.sigma_after)
        assert rows[0]["sequence"] == first.sequence

    def test_the_history_filters_by_variant_and_date(self, anonymous_client, rated) -> None:
        base = f"/api/bots/{rated[1].pk}/rating-history/"
        assert anonymous_client.get(f"{base}?variant=oh-hell").json()["count"] == 3
        assert anonymous_client.get(f"{base}?variant=blackout").json()["count"] == 1
        at = quote((DAY_ONE + timedelta(hours=1)).isoformat())
        body = anonymous_client.get(f"{base}?variant=oh-hell&at={at}").json()
        assert body["count"] == 1

    @pytest.mark.parametrize(
        ("query", "field"),
        [
            ("at=garbage", "at"),
            ("at=2024-13-45T99:00:00", "at"),
            ("at=" + "9" * 5000, "at"),
            ("variant=no-such-variant", "variant"),
            ("variant=%00", "variant"),
        ],
    )
    def test_bad_query_parameters_are_a_400_naming_them(
        self, anonymous_client, rated, query, field
    ) -> None:
        for suffix in ("ratings/", "rating-history/"):
            response = anonymous_client.get(f"/api/bots/{rated[0].pk}/{suffix}?{query}")
            if field == "variant" and suffix == "ratings/":
                assert response.status_code == 200
                continue
            assert response.status_code == 400, (suffix, query)
            assert field in error_of(response)["detail"]

    @pytest.mark.parametrize("bot_id", ["999999", "99999999999999999999999", "abc"])
    def test_an_unknown_bot_is_a_json_404(self, anonymous_client, bot_id) -> None:
        for suffix in ("ratings/", "rating-history/"):
            response = anonymous_client.get(f"/api/bots/{bot_id}/{suffix}")
            assert response.status_code == 404
            error_of(response)

    def test_the_history_makes_the_same_queries_for_5_or_50_updates(
        self, anonymous_client, players, oh_hell, django_capture_on_commit_callbacks
    ) -> None:
        def add(n):
            for i in range(n):
                play(players[:3], [3, 2, 1], when=DAY_ONE + timedelta(minutes=i), variant=oh_hell)
            with django_capture_on_commit_callbacks(execute=True):  # drops the cached pages
                ratings_apply_pending()

        url = f"/api/bots/{players[0].pk}/rating-history/"
        add(5)
        with CaptureQueriesContext(connection) as few:
            assert len(anonymous_client.get(url).json()["results"]) == 5
        add(45)
        with CaptureQueriesContext(connection) as many:
            assert len(anonymous_client.get(url).json()["results"]) == 50
        assert len(many) == len(few)


class TestRecompute:
    def test_staff_request_a_recompute_and_follow_its_progress(self, staff_client, staff) -> None:
        response = staff_client.post("/api/ratings/recompute/")
        assert response.status_code == 202
        body = response.json()
        job = RatingRecompute.objects.get()
        assert (body["id"], body["status"], body["percent"]) == (job.pk, "queued", 0.0)
        assert job.requested_by == staff
        again = staff_client.post("/api/ratings/recompute/")
        assert again.status_code == 409
        assert again.json()["error"]["detail"]["recompute"]["id"] == job.pk
        assert RatingRecompute.objects.count() == 1
        progress = staff_client.get(f"/api/ratings/recompute/{job.pk}/").json()
        assert progress["status"] == "queued" and progress["total"] == 0

    def test_a_finished_recompute_shows_its_totals(self, staff_client, rated) -> None:
        from tournaments.services.recompute import ratings_recompute_job

        job = RatingRecompute.objects.create()
        assert ratings_recompute_job(recompute_id=job.pk) == "finished"
        body = staff_client.get(f"/api/ratings/recompute/{job.pk}/").json()
        assert (body["status"], body["done"], body["total"], body["percent"]) == (
            "finished",
            4,
            4,
            100.0,
        )

    @pytest.mark.parametrize(
        ("client_fixture", "status"),
        [
            ("organiser_client", 403),
            ("owner_client", 403),
            ("other_client", 403),
            ("anonymous_client", 401),
        ],
    )
    def test_nobody_but_staff_recomputes_or_reads_a_recompute(
        self, db, client_fixture, status, request
    ) -> None:
        job = RatingRecompute.objects.create(status="finished")
        client = request.getfixturevalue(client_fixture)
        response = client.post("/api/ratings/recompute/")
        assert response.status_code == status
        error_of(response)
        assert client.get(f"/api/ratings/recompute/{job.pk}/").status_code == status
        assert RatingRecompute.objects.count() == 1

    @pytest.mark.parametrize("job_id", ["999999", "99999999999999999999999", "abc"])
    def test_an_unknown_recompute_is_a_json_404(self, staff_client, job_id) -> None:
        response = staff_client.get(f"/api/ratings/recompute/{job_id}/")
        assert response.status_code == 404
        error_of(response)

    def test_a_recompute_request_ignores_any_body(self, staff_client) -> None:
        response = staff_client.post(
            "/api/ratings/recompute/",
            b'{"status": "finished", "total": -1}',
            content_type="application/json",
        )
        assert response.status_code == 202
        assert RatingRecompute.objects.get().status == "queued"

    @pytest.mark.parametrize(
        ("body", "status"), [(b"{nope", 400), (b"[" * 100000, 400), (b"x" * (11 << 20), 413)]
    )
    def test_a_malformed_or_huge_body_is_refused_and_writes_nothing(
        self, staff_client, body, status
    ) -> None:
        response = staff_client.post(
            "/api/ratings/recompute/", body, content_type="application/json"
        )
        assert response.status_code == status
        error_of(response)
        assert RatingRecompute.objects.count() == 0
