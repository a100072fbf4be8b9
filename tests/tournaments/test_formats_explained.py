"""What ``rounds`` means and how matches are dealt per format (API schema and
docs/tournaments.md from one definition), Swiss byes in the standings with their ranking rule,
and the legend of the duplicate column with the warning that its deals come round again."""

from __future__ import annotations

import html
import json
from collections import Counter
from pathlib import Path

import pytest

from tests.support.starting import start_and_generate
from tournaments.models import MatchSeat, MatchStatus, TournamentFormat
from tournaments.models.competitions import DEALS, RANKING_RULE, ROUNDS_MEANING
from tournaments.selectors.tournaments import tournament_standings
from tournaments.services.runs import match_run
from tournaments.services.tournaments import tournament_advance, tournament_create

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def test_every_format_says_what_rounds_means_in_the_docs_and_the_schema(anonymous_client) -> None:
    assert set(ROUNDS_MEANING) == set(TournamentFormat.values) == set(RANKING_RULE) == set(DEALS)
    guide = (ROOT / "docs" / "tournaments.md").read_text()
    schema = json.loads(anonymous_client.get("/api/schema/?format=json").content)
    components = schema["components"]["schemas"]
    described = components["TournamentInputRequest"]["properties"]["rounds"]["description"]
    for fmt, meaning in ROUNDS_MEANING.items():
        assert f"| `{fmt}` | {meaning} |" in guide
        assert f"{fmt}: {meaning}" in described
        assert (
            f"{fmt}: {meaning}"
            in components["TournamentOutput"]["properties"]["rounds"]["description"]
        )
        assert f"| `{fmt}` | {meaning} | {RANKING_RULE[fmt]} | {DEALS[fmt]} |" in guide
        for component in ("TournamentInputRequest", "TournamentOutput"):
            format_help = components[component]["properties"]["format"]["description"]
            assert f"{fmt}: {DEALS[fmt]}" in format_help
    assert "can remember them across rotations" in DEALS["duplicate"]
    assert "trusts" in DEALS["duplicate"]


def _play(tournament) -> None:
    for _ in range(50):
        for match in tournament.matches.filter(status=MatchStatus.QUEUED).order_by("pk"):
            assert match_run(match_id=match.pk) == "recorded"
        if tournament_advance(tournament_id=tournament.pk) == "finished":
            return
    raise AssertionError("the tournament never finished")


@pytest.fixture
def short(db):
    from tests.support.users import make_user
    from tournaments.services.variants import variant_create

    return variant_create(
        user=make_user("maker", is_staff=True),
        name="two-deals",
        base="oh-hell",
        options={"max_cards": 2, "order": "down"},
    )


def test_swiss_byes_go_to_different_bots_and_count_as_an_average_result(
    organiser, playing_bots, short
) -> None:
    bots = playing_bots(5)
    tournament = tournament_create(
        organiser=organiser,
        name="swiss",
        variant=short,
        format="swiss",
        bot_ids=[b.pk for b in bots],
        table_size=4,
        time_limit_ms=500,
        rounds=3,
        seed=5,
    )
    _play(start_and_generate(tournament))
    result = tournament_standings(tournament=tournament)
    assert result["ranking_rule"] == RANKING_RULE["swiss"]
    lines = {line["bot"]: line for line in result["standings"]}
    assert set(lines) == {b.pk for b in bots}
    assert sorted(line["byes"] for line in lines.values()) == [0, 0, 1, 1, 1]
    earned: Counter[int] = Counter()
    for seat in MatchSeat.objects.filter(match__tournament=tournament):
        assert seat.rank is not None
        earned[seat.bot_id] += 4 - seat.rank
    for bot_id, line in lines.items():
        assert line["swiss_points"] == earned[bot_id] + 1.5 * line["byes"]
        assert line["matches"] == 3 - line["byes"]
    order = [(line["swiss_points"], line["total_score"]) for line in result["standings"]]
    assert order == sorted(order, reverse=True)


def test_the_duplicate_column_has_a_legend(organiser, playing_bots, short, client) -> None:
    bots = playing_bots(3)
    tournament = tournament_create(
        organiser=organiser,
        name="dup",
        variant=short,
        format="duplicate",
        bot_ids=[b.pk for b in bots],
        table_size=3,
        time_limit_ms=500,
    )
    _play(start_and_generate(tournament))
    page = client.get(f"/tournaments/{tournament.pk}/").content.decode()
    assert "Duplicate</abbr>" in page
    assert "the luck of the deal cancels out" in page
    assert f'<p class="alert deals">Deals: {html.escape(DEALS["duplicate"])}.</p>' in page
    assert html.escape(RANKING_RULE["duplicate"]) in page
