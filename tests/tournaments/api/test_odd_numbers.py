"""Numbers in URLs and query strings that only look like numbers, or do not fit the database:
always a 4xx naming what was wrong, never a 500."""

from __future__ import annotations

import pytest

from tournaments.models import Bot

# Digits Python's str.isdigit accepts but int() refuses, digits of other scripts, and integers
# past the database's 64-bit ids.
ODD = ["²", "٣", "¹²", "99999999999999999999", "-1", "0"]


@pytest.mark.parametrize("value", ODD)
def test_an_odd_variant_or_bot_in_a_query_string_is_never_a_500(
    anonymous_client, bot: Bot, value: str
) -> None:
    for url in (
        f"/api/leaderboard/?variant={value}",
        f"/api/bots/{bot.pk}/rating-history/?variant={value}",
        f"/api/bots/{bot.pk}/analytics/?variant={value}",
        f"/bots/{bot.pk}/?variant={value}",
        f"/api/bots/{bot.pk}/ratings/?variant={value}",
        f"/api/matches/?bot={value}",
        f"/api/tournaments/?variant={value}",
    ):
        response = anonymous_client.get(url)
        assert response.status_code in (200, 400, 404), (url, response.status_code)
    # The dashboard's list of matches exists whatever the filter: it answers or names the problem.
    response = anonymous_client.get(f"/matches/?bot={value}")
    assert response.status_code in (200, 400), response.status_code


@pytest.mark.parametrize("value", ["99999999999999999999", "9223372036854775808", "0"])
def test_an_odd_id_in_a_path_is_never_a_500(
    anonymous_client, owner_client, bot: Bot, value: str
) -> None:
    for client, url in (
        (anonymous_client, f"/api/bots/{value}/"),
        (anonymous_client, f"/api/bots/{value}/ratings/"),
        (anonymous_client, f"/api/bots/{value}/ratings/?at=2024-01-01T00:00:00Z"),
        (anonymous_client, f"/api/bots/{value}/rating-history/"),
        (anonymous_client, f"/api/bots/{value}/analytics/"),
        (anonymous_client, f"/api/bots/{value}/rating-history/?at=2024-01-01T00:00:00Z"),
        (anonymous_client, f"/api/matches/{value}/"),
        (anonymous_client, f"/api/tournaments/{value}/"),
        (owner_client, f"/api/bots/{bot.pk}/health-checks/{value}/"),
        (anonymous_client, f"/bots/{value}/"),
        (anonymous_client, f"/matches/{value}/"),
    ):
        response = client.get(url)
        assert response.status_code in (200, 400, 404), (url, response.status_code)
