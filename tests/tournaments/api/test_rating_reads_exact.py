"""The exact bytes the leaderboard and a bot's rating endpoints answer, and their query counts.

Every row is written with fixed values (ratings, history, times), so each answer is pinned
byte for byte: field names and order, number and time formats, ranks, ties, pagination
links, counts and error bodies.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tournaments.models import (
    BotStatus,
    DisabledCause,
    Match,
    MatchStatus,
    Rating,
    RatingHistory,
    Variant,
)

pytestmark = pytest.mark.django_db

BOARD = "/api/leaderboard/?variant=oh-hell"
JAN = datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
FEB = datetime(2024, 2, 1, 12, 0, tzinfo=UTC)


def body(response: Any) -> bytes:
    assert response["Content-Type"] == "application/json", response.content
    return response.content


def exact(value: Any) -> bytes:
    """The bytes DRF's JSON renderer makes of ``value`` (compact, UTF-8 as is)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


@pytest.fixture
def board(make_bot, owner, other_user, oh_hell, settings):
    """Seven rated bots of two owners, provisional below 10 matches, bots 2 and 3 level (27.0)."""
    settings.RATING_PROVISIONAL_MATCHES = 10
    settings.LEADERBOARD_CACHE_SECONDS = 0
    rows = [  # owner, mu, sigma, matches, version
        (owner, 40.5, 2.5, 30, 1),
        (other_user, 31.1, 0.7, 10, 3),
        (owner, 30.0, 1.0, 9, 1),
        (owner, 28.5, 0.5, 12, 2),
        (other_user, 25.0, 25.0 / 3, 0, 1),
        (owner, 20.25, 1.75, 1, 1),
        (other_user, 33.3, 8.1, 4, 1),
    ]
    bots = []
    for i, (user, mu, sigma, matches, version) in enumerate(rows):
        fields: dict[str, Any] = {"version": version}
        if i == 3:  # a disabled bot keeps its place; its reason is never shown here
            fields |= {
                "status": BotStatus.DISABLED,
                "disabled_cause": DisabledCause.HEALTH,
                "disabled_reason": "https://secret.example.org/play refused",
            }
        bot = make_bot(user, name=f"näme-{i}", **fields)
        Rating.objects.create(bot=bot, variant=oh_hell, mu=mu, sigma=sigma, matches=matches)
        Rating.objects.filter(bot=bot).update(updated_at=JAN if i % 2 else FEB)
        bots.append(bot)
    # The same bot in another variant: never on this board.
    blackout = Variant.objects.get(name="blackout")
    Rating.objects.create(bot=bots[0], variant=blackout, mu=50.0, sigma=1.0, matches=40)
    return bots


def row(bot, rank: int, owner: str, mu: float, sigma: float, matches: int, at: str) -> dict:
    return {
        "rank": rank,
        "bot": bot.pk,
        "bot_name": bot.name,
        "version": bot.version,
        "owner": owner,
        "mu": mu,
        "sigma": sigma,
        "conservative": mu - 3 * sigma,
        "matches": matches,
        "provisional": matches < 10,
        "updated_at": at,
    }


JAN_TEXT = "2024-01-02T03:04:05.678901Z"
FEB_TEXT = "2024-02-01T12:00:00Z"


def whole_board(bots) -> list[dict]:
    """The board in order: 33.0, 29.000000000000004, 27.0 twice (the earlier bot first), 15.0,
    9.000000000000004 and -3.552713678800501e-15 (25 - 3 * 25 / 3)."""
    rows = [
        row(bots[0], 1, "owner", 40.5, 2.5, 30, FEB_TEXT),
        row(bots[1], 2, "other", 31.1, 0.7, 10, JAN_TEXT),
        row(bots[2], 3, "owner", 30.0, 1.0, 9, FEB_TEXT),
        row(bots[3], 4, "owner", 28.5, 0.5, 12, JAN_TEXT),
        row(bots[5], 5, "owner", 20.25, 1.75, 1, JAN_TEXT),
        row(bots[6], 6, "other", 33.3, 8.1, 4, FEB_TEXT),
        row(bots[4], 7, "other", 25.0, 25.0 / 3, 0, FEB_TEXT),
    ]
    assert _ordered([dict(r) for r in rows]) == rows
    return rows


class TestLeaderboard:
    def test_the_first_page_exactly(self, anonymous_client, board) -> None:
        answer = anonymous_client.get(BOARD)
        assert body(answer) == exact(
            {"count": 7, "next": None, "previous": None, "results": whole_board(board)}
        )

    def test_a_deep_page_and_its_links_exactly(self, anonymous_client, board) -> None:
        expected = whole_board(board)
        answer = anonymous_client.get(f"{BOARD}&page_size=2&page=3")
        assert body(answer) == exact(
            {
                "count": 7,
                "next": "http://testserver/api/leaderboard/?page=4&page_size=2&variant=oh-hell",
                "previous": "http://testserver/api/leaderboard/?page=2&page_size=2&variant=oh-hell",
                "results": expected[4:6],
            }
        )
        last = anonymous_client.get(f"{BOARD}&page_size=2&page=4")
        assert body(last) == exact(
            {
                "count": 7,
                "next": None,
                "previous": "http://testserver/api/leaderboard/?page=3&page_size=2&variant=oh-hell",
                "results": expected[6:],
            }
        )
        second = anonymous_client.get(f"{BOARD}&page_size=2&page=2")
        assert exact(json.loads(body(second))["previous"]) == exact(
            "http://testserver/api/leaderboard/?page_size=2&variant=oh-hell"
        )

    def test_established_bots_only_exactly(self, anonymous_client, board, oh_hell) -> None:
        established = [r for r in whole_board(board) if not r["provisional"]]
        for rank, r in enumerate(established, start=1):  # ranks count among the shown bots
            r["rank"] = rank
        answer = anonymous_client.get(
            f"/api/leaderboard/?variant={oh_hell.pk}&include_provisional=false"
        )
        assert body(answer) == exact(
            {"count": 3, "next": None, "previous": None, "results": established}
        )

    def test_everyone_sees_the_same_board_and_a_cached_page_is_the_same_bytes(
        self, anonymous_client, owner_client, other_client, staff_client, board, settings
    ) -> None:
        fresh = body(anonymous_client.get(BOARD))
        assert b"secret" not in fresh and b"example.org" not in fresh
        for client in (owner_client, other_client, staff_client):
            assert body(client.get(BOARD)) == fresh
        settings.LEADERBOARD_CACHE_SECONDS = 60
        assert body(anonymous_client.get(BOARD)) == fresh  # kept
        assert body(anonymous_client.get(BOARD)) == fresh  # from the cache

    def test_an_empty_board_exactly(self, anonymous_client, presets, settings) -> None:
        settings.LEADERBOARD_CACHE_SECONDS = 0
        answer = anonymous_client.get("/api/leaderboard/?variant=blackout")
        assert body(answer) == exact({"count": 0, "next": None, "previous": None, "results": []})

    @pytest.mark.parametrize(
        ("query", "status", "error"),
        [
            ("", 400, ("invalid", "variant: This field is required.", "variant")),
            ("variant=nope", 400, ("invalid", "variant: No variant 'nope'.", "variant")),
            (
                "variant=oh-hell&include_provisional=perhaps",
                400,
                ("invalid", "include_provisional: Must be a valid boolean.", None),
            ),
            ("variant=oh-hell&page=9", 404, ("not_found", "Invalid page.", None)),
        ],
    )
    def test_errors_exactly(self, anonymous_client, board, query, status, error) -> None:
        answer = anonymous_client.get(f"/api/leaderboard/?{query}")
        assert answer.status_code == status
        code, message, field = error
        detail = {}
        if status == 400:
            detail = {field or message.split(":")[0]: [message.split(": ", 1)[1]]}
        expected = {"code": code, "message": message, "detail": detail}
        assert body(answer) == exact({"error": expected})

    @pytest.mark.parametrize("size", [2, 7])
    def test_a_page_from_the_database_takes_three_queries_at_any_size(
        self, anonymous_client, board, size
    ) -> None:
        with CaptureQueriesContext(connection) as queries:
            anonymous_client.get(f"{BOARD}&page_size={size}&page=1")
        assert len(queries) == 3  # the variant, the count, the page

    def test_the_board_is_in_the_order_of_the_leaderboard_selector(
        self, anonymous_client, board
    ) -> None:
        from tournaments.selectors.ratings import leaderboard

        rows = json.loads(body(anonymous_client.get(BOARD)))["results"]
        ratings = leaderboard(variant=Variant.objects.get(name="oh-hell"))
        assert [r["bot"] for r in rows] == [rating.bot_id for rating in ratings]


def _ordered(rows: list[dict]) -> list[dict]:
    """The board's order: conservative rating, best first; level ratings by bot id."""
    ordered = sorted(rows, key=lambda r: (-r["conservative"], r["bot"]))
    for rank, r in enumerate(ordered, start=1):
        r["rank"] = rank
    return ordered


@pytest.fixture
def history(bot, oh_hell, settings):
    """Five updates of one bot: four matches in two variants and a new version in oh-hell."""
    settings.RATING_PROVISIONAL_MATCHES = 2
    blackout = Variant.objects.get(name="blackout")
    updates = [  # variant, sequence, at, mu before, sigma before, mu after, sigma after, version
        (oh_hell, 10, JAN, 25.0, 25.0 / 3, 27.5, 7.25, None),
        (blackout, 11, JAN, 25.0, 25.0 / 3, 21.125, 7.5, None),
        (oh_hell, 12, FEB, 27.5, 7.25, 29.1, 6.3, None),
        (oh_hell, 13, FEB, 29.1, 6.3, 29.1, 7.0, 2),
        (oh_hell, 14, datetime(2024, 3, 1, tzinfo=UTC), 29.1, 7.0, 31.0, 6.0, None),
    ]
    rows = []
    for variant, sequence, at, mu0, sigma0, mu1, sigma1, version in updates:
        match = None
        if version is None:
            match = Match.objects.create(
                variant=variant,
                status=MatchStatus.FINISHED,
                started_at=at,
                finished_at=at,
            )
        rows.append(
            RatingHistory.objects.create(
                bot=bot,
                variant=variant,
                match=match,
                version=version,
                sequence=sequence,
                at=at,
                mu_before=mu0,
                sigma_before=sigma0,
                mu_after=mu1,
                sigma_after=sigma1,
            )
        )
    Rating.objects.create(bot=bot, variant=oh_hell, mu=31.0, sigma=6.0, matches=3)
    Rating.objects.create(bot=bot, variant=blackout, mu=21.125, sigma=7.5, matches=1)
    Rating.objects.filter(bot=bot, variant=oh_hell).update(updated_at=FEB)
    Rating.objects.filter(bot=bot, variant=blackout).update(updated_at=JAN)
    return rows


def history_row(row: RatingHistory, at: str) -> dict:
    return {
        "match": row.match_id,
        "version": row.version,
        "variant": row.variant.name,
        "sequence": row.sequence,
        "at": at,
        "mu_before": row.mu_before,
        "sigma_before": row.sigma_before,
        "mu_after": row.mu_after,
        "sigma_after": row.sigma_after,
    }


class TestRatingHistory:
    def test_every_update_exactly_oldest_first_by_variant(
        self, anonymous_client, bot, history
    ) -> None:
        texts = [JAN_TEXT, JAN_TEXT, FEB_TEXT, FEB_TEXT, "2024-03-01T00:00:00Z"]
        rows = [history_row(r, t) for r, t in zip(history, texts, strict=True)]
        in_order = [rows[0], rows[2], rows[3], rows[4], rows[1]]  # oh-hell is the older variant
        assert history[0].variant_id < history[1].variant_id
        url = f"/api/bots/{bot.pk}/rating-history/"
        assert body(anonymous_client.get(url)) == exact(
            {"count": 5, "next": None, "previous": None, "results": in_order}
        )
        page = anonymous_client.get(f"{url}?page_size=2&page=2")
        assert body(page) == exact(
            {
                "count": 5,
                "next": f"http://testserver{url}?page=3&page_size=2",
                "previous": f"http://testserver{url}?page_size=2",
                "results": in_order[2:4],
            }
        )
        filtered = anonymous_client.get(f"{url}?variant=oh-hell&at=2024-02-01T12:00:00Z")
        assert body(filtered) == exact(
            {"count": 3, "next": None, "previous": None, "results": in_order[:3]}
        )
        none = anonymous_client.get(f"{url}?at=2023-01-01T00:00:00Z")
        assert body(none) == exact({"count": 0, "next": None, "previous": None, "results": []})

    @pytest.mark.parametrize(
        ("query", "status", "expected"),
        [
            (
                "?variant=nope",
                400,
                {
                    "code": "invalid",
                    "message": "variant: No variant 'nope'.",
                    "detail": {"variant": ["No variant 'nope'."]},
                },
            ),
            (
                "?at=garbage",
                400,
                {
                    "code": "invalid",
                    "message": "at: Datetime has wrong format. Use one of these formats instead:"
                    " YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
                    "detail": {
                        "at": [
                            "Datetime has wrong format. Use one of these formats instead:"
                            " YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."
                        ]
                    },
                },
            ),
            ("?page=4", 404, {"code": "not_found", "message": "Invalid page.", "detail": {}}),
        ],
    )
    def test_errors_exactly(self, anonymous_client, bot, history, query, status, expected) -> None:
        answer = anonymous_client.get(f"/api/bots/{bot.pk}/rating-history/{query}")
        assert answer.status_code == status
        assert body(answer) == exact({"error": expected})

    def test_an_unknown_bot_is_a_404_before_its_query_is_read(
        self, anonymous_client, history
    ) -> None:
        for suffix in ("rating-history/?at=garbage", "ratings/?at=garbage"):
            answer = anonymous_client.get(f"/api/bots/987654/{suffix}")
            assert body(answer) == exact(
                {"error": {"code": "not_found", "message": "Not found.", "detail": {}}}
            )

    @pytest.mark.parametrize("query", ["", "?variant=oh-hell", "?page_size=1"])
    def test_a_page_takes_the_same_few_queries_however_long(
        self, anonymous_client, bot, history, query
    ) -> None:
        with CaptureQueriesContext(connection) as queries:
            anonymous_client.get(f"/api/bots/{bot.pk}/rating-history/{query}")
        # The variant when one is asked for, the count, the page; the bot only when empty.
        assert len(queries) == (3 if "variant" in query else 2)

    def test_an_empty_history_is_a_page_for_a_known_bot_only(self, anonymous_client, bot) -> None:
        answer = anonymous_client.get(f"/api/bots/{bot.pk}/rating-history/")
        assert body(answer) == exact({"count": 0, "next": None, "previous": None, "results": []})
        for suffix in ("rating-history/", "rating-history/?page=2", "ratings/"):
            answer = anonymous_client.get(f"/api/bots/{bot.pk + 1}/{suffix}")
            assert answer.status_code == 404, suffix
            assert body(answer) == exact(
                {"error": {"code": "not_found", "message": "Not found.", "detail": {}}}
            )
        assert body(anonymous_client.get(f"/api/bots/{bot.pk}/ratings/")) == b"[]"


class TestBotRatings:
    def test_the_ratings_now_exactly(self, anonymous_client, bot, history) -> None:
        answer = anonymous_client.get(f"/api/bots/{bot.pk}/ratings/")
        assert body(answer) == exact(
            [
                {
                    "variant": "blackout",
                    "mu": 21.125,
                    "sigma": 7.5,
                    "conservative": 21.125 - 22.5,
                    "matches": 1,
                    "provisional": True,
                    "as_of": JAN_TEXT,
                    "match": None,
                },
                {
                    "variant": "oh-hell",
                    "mu": 31.0,
                    "sigma": 6.0,
                    "conservative": 13.0,
                    "matches": 3,
                    "provisional": False,
                    "as_of": FEB_TEXT,
                    "match": None,
                },
            ]
        )

    def test_the_ratings_on_a_date_exactly(self, anonymous_client, bot, history) -> None:
        blackout = {
            "variant": "blackout",
            "mu": 21.125,
            "sigma": 7.5,
            "conservative": 21.125 - 22.5,
            "matches": 1,
            "provisional": True,
            "as_of": JAN_TEXT,
            "match": history[1].match_id,
        }
        at_feb = anonymous_client.get(f"/api/bots/{bot.pk}/ratings/?at=2024-02-15T00:00:00Z")
        # The last update then marks a new version: no match, and it is not counted as one.
        assert body(at_feb) == exact(
            [
                blackout,
                {
                    "variant": "oh-hell",
                    "mu": 29.1,
                    "sigma": 7.0,
                    "conservative": 29.1 - 21.0,
                    "matches": 2,
                    "provisional": False,
                    "as_of": FEB_TEXT,
                    "match": None,
                },
            ]
        )
        at_jan = anonymous_client.get(f"/api/bots/{bot.pk}/ratings/?at=2024-01-02T03:04:05.678901Z")
        assert body(at_jan) == exact(
            [
                blackout,
                {
                    "variant": "oh-hell",
                    "mu": 27.5,
                    "sigma": 7.25,
                    "conservative": 27.5 - 21.75,
                    "matches": 1,
                    "provisional": True,
                    "as_of": JAN_TEXT,
                    "match": history[0].match_id,
                },
            ]
        )
        before = anonymous_client.get(f"/api/bots/{bot.pk}/ratings/?at=2023-12-31T00:00:00Z")
        assert body(before) == b"[]"

    def test_a_bad_date_is_a_400_naming_it(self, anonymous_client, bot, history) -> None:
        answer = anonymous_client.get(f"/api/bots/{bot.pk}/ratings/?at=2024-13-45T99:00:00")
        message = (
            "Datetime has wrong format. Use one of these formats instead:"
            " YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."
        )
        assert body(answer) == exact(
            {"error": {"code": "invalid", "message": f"at: {message}", "detail": {"at": [message]}}}
        )

    @pytest.mark.parametrize("query", ["", "?at=2024-02-15T00:00:00Z"])
    def test_the_ratings_take_the_same_few_queries_in_any_number_of_variants(
        self, anonymous_client, bot, history, query
    ) -> None:
        with CaptureQueriesContext(connection) as queries:
            anonymous_client.get(f"/api/bots/{bot.pk}/ratings/{query}")
        assert len(queries) == 1  # the bot itself only when it has no rating
