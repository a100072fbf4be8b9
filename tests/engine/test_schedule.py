"""Hand sizes and deal counts of every preset, from hand-written tables (docs/rules.md 2, 3.2)."""

from __future__ import annotations

import pytest

from engine import PRESETS, Game, preset
from tests.support.engine import random_game

DOWN_UP_10 = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
DOWN_UP_8 = [8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8]
DOWN_UP_7 = [7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7]
DOWN_UP_6 = [6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6]
OH_HELL = {3: DOWN_UP_10, 4: DOWN_UP_10, 5: DOWN_UP_10, 6: DOWN_UP_8, 7: DOWN_UP_7}
ASCENDING = {
    3: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    4: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
    5: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    6: [1, 2, 3, 4, 5, 6, 7, 8],
    7: [1, 2, 3, 4, 5, 6, 7],
}

# preset -> players -> hand size of every deal, written out from docs/rules.md section 2.
EXPECTED: dict[str, dict[int, list[int]]] = {
    "oh-hell": OH_HELL,
    "blackout": OH_HELL,
    "la-podrida": OH_HELL,
    "nomination-whist": {n: DOWN_UP_7 for n in range(3, 8)},
    "up-and-down-the-river": {
        4: DOWN_UP_10,
        5: DOWN_UP_10,
        6: DOWN_UP_8,
        7: DOWN_UP_7,
        8: DOWN_UP_6,
    },
    "oh-pshaw": ASCENDING,
    "ascending-blackout": ASCENDING,
    "british-oh-hell": {
        3: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17],
        4: ASCENDING[4],
        5: ASCENDING[5],
        6: ASCENDING[6],
        7: ASCENDING[7],
    },
}
DEAL_COUNTS = {
    "oh-hell": {3: 19, 4: 19, 5: 19, 6: 15, 7: 13},
    "nomination-whist": {3: 13, 4: 13, 5: 13, 6: 13, 7: 13},
    "up-and-down-the-river": {4: 19, 5: 19, 6: 15, 7: 13, 8: 11},
    "oh-pshaw": {3: 15, 4: 13, 5: 10, 6: 8, 7: 7},
    "british-oh-hell": {3: 17, 4: 13, 5: 10, 6: 8, 7: 7},
}
OH_WELL_HAND = {3: 17, 4: 13, 5: 10, 6: 8, 7: 7}
CASES = [(name, n) for name, table in EXPECTED.items() for n in table]


def test_every_preset_has_a_table_for_every_allowed_player_count() -> None:
    covered = {name: sorted(table) for name, table in EXPECTED.items()}
    covered["oh-well"] = sorted(OH_WELL_HAND)
    assert covered == {
        name: list(range(v.min_players, v.max_players + 1)) for name, v in PRESETS.items()
    }


@pytest.mark.parametrize(("name", "players"), CASES)
def test_the_schedule_matches_the_rules_table(name: str, players: int) -> None:
    assert list(preset(name).schedule(players)) == EXPECTED[name][players]


@pytest.mark.parametrize(("name", "players"), CASES)
def test_a_played_game_deals_the_scheduled_hand_sizes(name: str, players: int) -> None:
    game = random_game(preset(name), players, seed=11)
    assert [deal.hand_size for deal in game.deals] == EXPECTED[name][players]
    for deal in game.deals:
        assert [bin(hand).count("1") for hand in deal.hands] == [deal.hand_size] * players
        assert len(deal.winners) == deal.hand_size


@pytest.mark.parametrize(
    ("name", "players", "count"),
    [(name, n, c) for name, table in DEAL_COUNTS.items() for n, c in table.items()],
)
def test_the_number_of_deals_matches_the_rules(name: str, players: int, count: int) -> None:
    assert len(random_game(preset(name), players, seed=5).deals) == count


@pytest.mark.parametrize(("players", "hand"), sorted(OH_WELL_HAND.items()))
def test_oh_well_deals_the_whole_pack_after_removal_every_deal(players: int, hand: int) -> None:
    game = random_game(preset("oh-well"), players, seed=3)
    assert {deal.hand_size for deal in game.deals} == {hand}
    assert set(preset("oh-well").schedule(players)) == {hand}
    assert len(preset("oh-well").schedule(players)) == 100  # the safety cap on deals


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"order": "up_down", "max_cards": 3}, [1, 2, 3, 2, 1]),
        ({"order": "down", "max_cards": 4}, [4, 3, 2, 1]),
        ({"order": "up", "max_cards": 4}, [1, 2, 3, 4]),
        ({"order": "down_up", "max_cards": 3}, [3, 2, 1, 2, 3]),
        ({"order": "constant", "max_cards": 5, "deals": 3}, [5, 5, 5]),
        ({"order": "down_up", "max_cards": 4, "deals": 5}, [4, 3, 2, 1, 2]),
        ({"order": "up", "max_cards": "seven"}, [1, 2, 3, 4, 5, 6, 7]),
        ({"order": "down", "max_cards": "max_possible"}, list(range(13, 0, -1))),
    ],
)
def test_each_order_runs_the_hand_sizes_as_written(options: dict, expected: list[int]) -> None:
    variant = preset("oh-hell", **options)
    assert list(variant.schedule(4)) == expected
    assert [d.hand_size for d in random_game(variant, 4, seed=1).deals] == expected


def test_max_possible_gives_three_players_seventeen_cards() -> None:
    assert preset("oh-hell", max_cards="max_possible", order="down").schedule(3)[0] == 17


def test_a_target_score_schedule_repeats_the_order_up_to_the_cap() -> None:
    variant = preset("oh-hell", max_cards=2, target_score=10_000, max_deals=7)
    assert variant.schedule(4) == (2, 1, 2, 2, 1, 2, 2)


def test_the_game_reports_its_schedule_and_deal_number() -> None:
    game = Game(preset("nomination-whist"), 5, seed=2)
    assert list(game.schedule) == DOWN_UP_7
    assert game.deal_number == 1
    assert game.hand_size == 7
