"""A bot that remembers every deal it plays predicts no hidden card on a default ladder.

Every card dealt is played in Oh Hell, so a bot that has played a deal knows nearly every hand
of it. A ladder created with the default settings (through the API, as staff do) seats a real
HTTP bot that remembers what it saw (tests/support/memorising.py) with three reference
bots, and its tables are played one after another. At the first request of every deal the bot
predicts the other seats' hands from a deal it remembers, when it recognises one from its own
hand and the turned card.

Its hits on one seat's hand are then, by chance, a hypergeometric draw per deal; the test
asserts the total is not improbably high for that law (exact tail, below ALPHA, as in
tests/tournaments/test_spy_bot.py). As a control, on a ladder with duplicate switched on, where
the rotations of a table replay the same deals, the same bot recognises every deal after the
first rotation and predicts far above chance, which that bound catches.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User

from tests.support.memorising import Memoriser, serve_memoriser
from tests.support.spying import Prediction, chance_tail, seat_hits
from tests.support.users import client_for, ladder_teams_apart
from tournaments.models import Ladder, Match, MatchStatus, Replay, Variant
from tournaments.services.ladders import ladder_ensure_default, ladder_pause, ladders_top_up
from tournaments.services.runs import match_run
from tournaments.services.variants import variant_create

pytestmark = pytest.mark.django_db

# A chance of at most one in a million to fail a ladder whose deals are independent.
ALPHA = 1e-6
# Matches the bot plays: one table of four in every seat rotation when duplicate is on.
MATCHES = 4
DEALS = 3  # of HAND cards each: a hand the bot recognises, few requests
HAND = 5
TABLE = 4


@dataclass
class World:
    memoriser: Memoriser
    variant: Variant
    staff: User


@pytest.fixture
def world(
    presets, make_bot, owner, staff, example_bots, loopback_allowed, settings
) -> Iterator[World]:
    settings.LADDER_MATCHES_IN_FLIGHT = 1
    oh_hell_ladder = ladder_ensure_default()
    assert oh_hell_ladder is not None
    ladder_pause(ladder=oh_hell_ladder)  # the oh-hell ladder would seat the bots too
    variant = variant_create(
        user=staff,
        name="three-five-card-deals",
        base="oh-hell",
        options={"max_cards": HAND, "order": "constant", "deals": DEALS},
    )
    memoriser = Memoriser()
    server = serve_memoriser(memoriser)
    bots = [
        make_bot(
            owner,
            name="memoriser",
            endpoint_url=f"http://127.0.0.1:{server.server_address[1]}/",
            status="active",
            ladder_opt_in=True,
        )
    ]
    for i in range(TABLE - 1):
        bots.append(
            make_bot(
                owner,
                endpoint_url=f"{example_bots.urls['heuristic']}/m{i}",
                status="active",
                ladder_opt_in=True,
            )
        )
    ladder_teams_apart(bots)
    yield World(memoriser, variant, staff)
    server.shutdown()
    server.server_close()


def switch_ladder_on(world: World, **options: object) -> Ladder:
    """Switch the variant's ladder on through the API, as staff do."""
    data = {"variant": world.variant.name, "table_size": TABLE, **options}
    response = client_for(world.staff).post("/api/ladders/", data, format="json")
    assert response.status_code == 201, response.content
    return Ladder.objects.get(pk=response.json()["id"])


def play(ladder: Ladder) -> list[Match]:
    """Top the ladder up and play its tables, one match after another, as its bots may."""
    played: list[Match] = []
    while len(played) < MATCHES:
        assert ladders_top_up() > 0
        for match in Match.objects.filter(ladder=ladder, status=MatchStatus.QUEUED).order_by("pk"):
            assert match_run(match_id=match.pk) == "recorded"
            played.append(match)
    assert len(played) == MATCHES
    return played


def hands_dealt(matches: list[Match]) -> dict[str, list[list[set[str]]]]:
    """Every seat's hand of every deal, by match id, from the replays."""
    return {
        str(m.pk): [
            [set(h) for h in deal["hands"]] for deal in Replay.objects.get(match=m).data["deals"]
        ]
        for m in matches
    }


def later(memoriser: Memoriser, first: Match) -> list[Prediction]:
    """The predictions of the matches after the first, when the bot had deals to remember."""
    predictions = [p for p in memoriser.predictions if p.match_id != str(first.pk)]
    assert len(predictions) == (MATCHES - 1) * DEALS
    return predictions


def tails(
    predictions: list[Prediction], truth: dict[str, list[list[set[str]]]]
) -> dict[int, tuple[int, float]]:
    """Per other seat (offset from the bot's): cards guessed right, and P(as many by chance)."""
    return {
        offset: (hits, chance_tail(draws, hits))
        for offset, (hits, draws) in sorted(seat_hits(predictions, truth).items())
    }


def test_a_bot_remembering_its_deals_predicts_no_hidden_card_on_a_default_ladder(world) -> None:
    ladder = switch_ladder_on(world)
    matches = play(ladder)
    truth = hands_dealt(matches)
    found = tails(later(world.memoriser, matches[0]), truth)
    print("hits and P(chance) by seat offset:", found)
    for offset, (hits, tail) in found.items():
        assert tail >= ALPHA, f"seat +{offset}: {hits} cards right, P(chance) = {tail:.2e}"
    assert world.memoriser.recognised == set()  # no deal came round again
    assert len({m.seed for m in matches}) == MATCHES


def test_with_duplicate_on_the_same_bot_predicts_far_above_chance(world) -> None:
    ladder = switch_ladder_on(world, duplicate=True)
    matches = play(ladder)
    assert len({m.duplicate_group for m in matches}) == 1 and len({m.seed for m in matches}) == 1
    truth = hands_dealt(matches)
    predictions = later(world.memoriser, matches[0])
    assert world.memoriser.recognised == {(p.match_id, p.deal) for p in predictions}
    found = tails(predictions, truth)
    print("hits and P(chance) by seat offset:", found)
    for offset, (hits, tail) in found.items():
        # Every card but those it never saw played: at most one a seat and deal.
        assert hits >= len(predictions) * (HAND - 1), (offset, hits)
        assert tail < ALPHA
