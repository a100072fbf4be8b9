"""Deal scores, totals, winner bonus, target-score end and standings (docs/rules.md 3.7, 3.8).

Each rule is checked on ``engine.scoring`` directly and through a real deal whose tricks are
known in advance: cards are played by a fixed policy that does not look at the bids, so the
tricks each seat takes depend only on the seed, and the bids can be chosen to make or miss.
"""

from __future__ import annotations

import pytest

from engine import Game, Variant, preset
from engine.scoring import (
    deal_score,
    made_score,
    made_zero_score,
    missed_score,
    rating_ranks,
    shared_ranks,
)
from engine.variant import Made, MadeZero, Missed
from tests.support.engine import play_deal, random_game, tricks_with_fixed_play


def one_deal(cards: int = 7, **options: object) -> Variant:
    """One deal of ``cards`` cards for 3 or 4 players, without the hook."""
    return preset(
        "oh-hell", hook=False, order="constant", deals=1, max_cards=cards, max_players=4, **options
    )


def seed_where_a_seat_takes(tricks: int, variant: Variant, players: int = 4) -> tuple[int, int]:
    """A seed, and a seat that takes exactly ``tricks`` tricks in the first deal."""
    for seed in range(500):
        taken = tricks_with_fixed_play(variant, players, seed)
        if tricks in taken:
            return seed, taken.index(tricks)
    raise AssertionError(f"no seed gives a seat {tricks} tricks")


def score_in_a_real_deal(variant: Variant, tricks: int, bid: int) -> int:
    """Score of a seat that bids ``bid`` and takes ``tricks`` in a real one-deal game."""
    seed, seat = seed_where_a_seat_takes(tricks, variant)
    taken = tricks_with_fixed_play(variant, 4, seed)
    bids = [bid if s == seat else taken[s] for s in range(4)]
    game = Game(variant, 4, seed)
    play_deal(game, bids)
    assert game.is_over
    assert game.deals[0].tricks_won == taken
    assert game.totals == game.deals[0].scores
    return game.deals[0].scores[seat]


BID_3_MADE = {
    Made.TEN_PLUS_BID: 13,
    Made.TEN_TIMES_BID: 30,
    Made.TEN_PLUS_BID_SQUARED: 19,
    Made.TEN_PLUS_TWO_BID: 16,
    Made.FIVE_PLUS_BID: 8,
    Made.BONUS_ONLY: 10,
}


@pytest.mark.parametrize(("rule", "points"), sorted(BID_3_MADE.items()))
def test_a_bid_of_three_made_scores_as_the_rules_example(rule: Made, points: int) -> None:
    assert made_score(rule, 3) == points
    assert score_in_a_real_deal(one_deal(made=rule), tricks=3, bid=3) == points


@pytest.mark.parametrize(
    ("rule", "points"),
    [
        (MadeZero.TEN, 10),
        (MadeZero.FIVE, 5),
        (MadeZero.FIVE_PLUS_CARDS, 12),
        (MadeZero.TEN_PLUS_CARDS, 17),
    ],
)
def test_a_bid_of_zero_made_in_seven_tricks_scores_as_the_rules_example(
    rule: MadeZero, points: int
) -> None:
    assert made_zero_score(rule, 7) == points
    assert score_in_a_real_deal(one_deal(made_zero=rule), tricks=0, bid=0) == points


def test_zero_made_counts_the_tricks_in_the_deal_not_the_bid() -> None:
    assert made_zero_score(MadeZero.FIVE_PLUS_CARDS, 1) == 6
    variant = one_deal(cards=3, made_zero=MadeZero.TEN_PLUS_CARDS)
    assert score_in_a_real_deal(variant, tricks=0, bid=0) == 13


@pytest.mark.parametrize(
    ("rule", "over", "under"),
    # bid 1 took 3 (two over); bid 5 took 3 (two under)
    [
        (Missed.TAKEN, 3, 3),
        (Missed.ZERO, 0, 0),
        (Missed.MINUS_DIFF, -2, -2),
        (Missed.MINUS_DIFF_SQUARED, -4, -4),
    ],
)
def test_a_missed_bid_scores_as_its_rule_says(rule: Missed, over: int, under: int) -> None:
    assert missed_score(rule, 1, 3) == over
    assert missed_score(rule, 5, 3) == under
    over_variant = one_deal(missed_over=rule, missed_under=Missed.ZERO)
    under_variant = one_deal(missed_under=rule, missed_over=Missed.ZERO)
    assert score_in_a_real_deal(over_variant, tricks=3, bid=1) == over
    assert score_in_a_real_deal(under_variant, tricks=3, bid=5) == under


def test_too_many_and_too_few_tricks_are_scored_by_separate_rules() -> None:
    variant = one_deal(missed_over="minus_diff", missed_under="minus_diff_squared")
    assert deal_score(variant, bid=2, taken=5, tricks=7) == -3
    assert deal_score(variant, bid=5, taken=2, tricks=7) == -9
    assert score_in_a_real_deal(variant, tricks=3, bid=0) == -3
    assert score_in_a_real_deal(variant, tricks=3, bid=6) == -9


def test_double_when_all_doubles_an_exact_bid_of_every_trick() -> None:
    variant = one_deal(cards=1, double_when_all=True)
    assert deal_score(variant, bid=7, taken=7, tricks=7) == 34
    assert deal_score(variant, bid=3, taken=3, tricks=7) == 13  # not all the tricks
    assert score_in_a_real_deal(variant, tricks=1, bid=1) == 22
    assert (
        score_in_a_real_deal(
            one_deal(cards=1, double_when_all=True, made="10*bid"), tricks=1, bid=1
        )
        == 20
    )


def test_without_double_when_all_every_trick_scores_normally() -> None:
    assert score_in_a_real_deal(one_deal(cards=1), tricks=1, bid=1) == 11


def test_british_oh_hell_scores_ten_for_any_exact_bid_and_nothing_else() -> None:
    variant = preset("british-oh-hell")
    assert [deal_score(variant, b, b, 7) for b in range(8)] == [10] * 8
    assert deal_score(variant, 2, 3, 7) == 0
    assert deal_score(variant, 4, 3, 7) == 0


def test_totals_add_up_the_deal_scores() -> None:
    game = random_game(preset("oh-hell"), 4, seed=31)
    assert game.totals == [sum(d.scores[s] for d in game.deals) for s in range(4)]


def test_every_seat_scores_each_deal_by_the_rules() -> None:
    for name in ("oh-hell", "blackout", "british-oh-hell"):
        variant = preset(name)
        for deal in random_game(variant, 5, seed=2).deals:
            for bid, taken, score in zip(deal.bids, deal.tricks_won, deal.scores, strict=True):
                if bid == taken:
                    expected = 10 if name == "british-oh-hell" else 10 + bid
                elif name == "oh-hell":
                    expected = taken
                else:
                    expected = 0
                assert score == expected


def three_players_one_card(**options: object) -> tuple[Game, int]:
    """A 3-player game of one 1-card deal, and the seat whose card wins the trick."""
    variant = one_deal(cards=1, **options)
    taken = tricks_with_fixed_play(variant, 3, seed=0)
    return Game(variant, 3, seed=0), taken.index(1)


def test_the_winner_bonus_goes_to_the_single_winner() -> None:
    game, top = three_players_one_card(winner_bonus=10, missed_over="zero")
    play_deal(game, [1 if s == top else 0 for s in range(3)])
    assert game.deals[0].scores == [11 if s == top else 10 for s in range(3)]
    assert game.bonus == [10 if s == top else 0 for s in range(3)]
    assert game.totals == [21 if s == top else 10 for s in range(3)]


def test_tied_winners_all_get_the_bonus_and_stay_tied() -> None:
    game, top = three_players_one_card(winner_bonus=10, missed_over="zero")
    play_deal(game, [0, 0, 0])  # the trick winner misses, the others make 0
    assert game.totals == [0 if s == top else 20 for s in range(3)]
    assert game.ranks() == [3 if s == top else 1 for s in range(3)]


def test_no_bonus_without_winner_bonus() -> None:
    game, top = three_players_one_card()
    play_deal(game, [0, 0, 0])
    assert game.bonus == [0, 0, 0]
    assert game.totals == [1 if s == top else 10 for s in range(3)]


def test_a_target_score_ends_the_game_after_the_first_deal_reaching_it() -> None:
    variant = preset("oh-hell", order="constant", max_cards=1, hook=False, target_score=1)
    game, _ = Game(variant, 3, seed=0), None
    play_deal(game, [0, 0, 0])  # someone always takes the trick: 1 point or more
    assert game.is_over
    assert game.finished_deals() == 1


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
def test_oh_well_ends_after_the_deal_in_which_someone_reaches_100(players: int) -> None:
    game = random_game(preset("oh-well"), players, seed=players)
    running = [0] * players
    for number, deal in enumerate(game.deals, start=1):
        running = [a + b for a, b in zip(running, deal.scores, strict=True)]
        if number < len(game.deals):
            assert max(running) < 100
    assert max(running) >= 100
    assert game.totals == running


def test_the_safety_cap_ends_a_target_score_game() -> None:
    variant = preset("oh-well", target_score=10_000, max_deals=3)
    game = random_game(variant, 4, seed=1)
    assert game.is_over
    assert len(game.deals) == 3
    assert max(game.totals) < 10_000


def test_equal_totals_share_a_rank() -> None:
    assert shared_ranks([10, 20, 20, 5]) == [3, 1, 1, 4]
    assert shared_ranks([7, 7, 7]) == [1, 1, 1]
    assert shared_ranks([1, 2, 3, 4]) == [4, 3, 2, 1]


def test_disqualified_seats_rank_last_for_ratings_and_ties_are_shared() -> None:
    assert rating_ranks([50, 40, 40, 90], [False, False, False, True]) == [1, 2, 2, 4]
    assert rating_ranks([10, 20, 30], [True, True, False]) == [2, 2, 1]


def test_standings_list_seats_by_rank_with_shared_ranks() -> None:
    game, top = three_players_one_card()
    play_deal(game, [0, 0, 0])
    others = [s for s in range(3) if s != top]
    assert game.standings() == [
        {"seat": others[0], "total": 10, "rank": 1},
        {"seat": others[1], "total": 10, "rank": 1},
        {"seat": top, "total": 1, "rank": 3},
    ]


def test_exact_bids_count_only_finished_deals() -> None:
    variant = preset("oh-hell", order="constant", max_cards=3, deals=2, hook=False)
    game = Game(variant, 3, seed=0)
    play_deal(game, [0, 0, 0])
    made_first = [
        int(b == t) for b, t in zip(game.deals[0].bids, game.deals[0].tricks_won, strict=True)
    ]
    for _ in range(3):
        game.bid(0)  # everyone bids 0 and has no trick yet: not made until the deal ends
    assert game.exact_bids() == made_first
