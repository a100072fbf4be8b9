"""The compiled core and its fallback play exactly as the reference engine, action by action.

Every implementation of ``engine.core.CoreGame`` (the compiled core where it was built, and
``ReferenceGame`` over ``Game``) is driven through random legal actions beside a plain ``Game``
over random variants (every option, tests/support/engine_strategies.py) and every preset, and must
agree with it on everything a player or a search could read: dealer, seat to act, hands, legal
actions, trump, bids, tricks, totals and the winner's bonus.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import PRESETS, Game, IllegalActionError, InvalidSeedError, Variant, core, preset
from engine.cards import CARD_INDEX
from engine.dealing import MAX_SEED
from tests.support.engine_strategies import variant_and_players

DIFFERENTIAL = settings(max_examples=60, deadline=None)
MAKERS: dict[str, Callable[[Variant, int, int], core.CoreGame]] = {
    "reference": lambda v, n, seed: core.new_game(v, n, seed, compiled=False),
}
if core._compiled is not None:
    MAKERS["compiled"] = lambda v, n, seed: core.new_game(v, n, seed, compiled=True)
KINDS = sorted(MAKERS)
_PHASES = {"bid": 0, "play": 1, "over": 2}


def _assert_same(fast: core.CoreGame, game: Game) -> None:
    n = game.players
    assert fast.phase == _PHASES[game.phase]
    assert fast.to_act == game.to_act
    assert (fast.first_dealer, fast.dealer) == (game.first_dealer, game.dealer)
    assert (fast.deal_number, fast.hand_size) == (game.deal_number, game.hand_size)
    assert [fast.hand_mask(s) for s in range(n)] == [game.hand_mask(s) for s in range(n)]
    assert fast.legal_mask() == game.legal_mask()
    assert fast.legal_bids() == sum(1 << b for b in game.legal_bids())
    assert fast.trump == ("CDHS".index(game.trump) if game.trump else -1)
    assert fast.trump_card == (CARD_INDEX[game.trump_card] if game.trump_card else -1)
    assert fast.bids == [-1 if b is None else b for b in game.bids]
    assert fast.tricks_won == game.tricks_won
    assert fast.totals == game.totals
    assert fast.bonus == game.bonus


def _play_beside(fast: core.CoreGame, game: Game, rng: random.Random) -> None:
    """Play random legal actions on both, comparing after every one."""
    _assert_same(fast, game)
    while not game.is_over:
        if game.phase == "bid":
            bid = rng.choice(game.legal_bids())
            game.bid(bid)
            fast.bid(bid)
        else:
            card = rng.choice(game.legal_cards())
            game.play(card)
            fast.play(CARD_INDEX[card])
        _assert_same(fast, game)


@pytest.mark.parametrize("kind", KINDS)
@DIFFERENTIAL
@given(table=variant_and_players(), seed=st.integers(0, MAX_SEED), moves=st.integers(0, 2**32))
def test_every_variant_plays_as_the_reference_action_by_action(
    kind: str, table: tuple[Variant, int], seed: int, moves: int
) -> None:
    variant, players = table
    _play_beside(
        MAKERS[kind](variant, players, seed), Game(variant, players, seed), random.Random(moves)
    )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_plays_as_the_reference(kind: str, name: str) -> None:
    variant = preset(name)
    for seed in range(4):
        players = variant.min_players + seed % (variant.max_players - variant.min_players + 1)
        fast, game = MAKERS[kind](variant, players, seed), Game(variant, players, seed)
        _play_beside(fast, game, random.Random(seed))


@DIFFERENTIAL
@given(table=variant_and_players(), seed=st.integers(0, MAX_SEED), rollout=st.integers(0, MAX_SEED))
def test_a_playout_gives_the_same_game_on_every_implementation(
    table: tuple[Variant, int], seed: int, rollout: int
) -> None:
    variant, players = table
    finished = []
    for kind in KINDS:
        fast = MAKERS[kind](variant, players, seed)
        fast.playout(rollout)
        assert fast.phase == 2 and fast.to_act is None
        finished.append((fast.totals, fast.bonus, fast.deal_number))
    assert all(result == finished[0] for result in finished)


@pytest.mark.parametrize("kind", KINDS)
def test_a_playout_of_one_deal_stops_at_the_next_deal(kind: str) -> None:
    fast = MAKERS[kind](preset("oh-hell"), 4, 7)
    fast.playout(3, deals=1)
    assert fast.deal_number == 2 and fast.phase == 0
    assert sum(fast.totals) != 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_clone_goes_its_own_way(kind: str) -> None:
    original = MAKERS[kind](preset("oh-hell"), 4, 11)
    copy = original.clone()
    copy.playout(5)
    assert copy.phase == 2
    assert original.phase == 0 and original.deal_number == 1 and original.totals == [0] * 4
    again = original.clone()
    again.playout(5)
    assert again.totals == copy.totals


@pytest.mark.parametrize("kind", KINDS)
def test_set_hands_deals_a_sampled_world_of_the_same_sizes(kind: str) -> None:
    fast = MAKERS[kind](preset("oh-hell", first_dealer="random"), 4, 3)
    while fast.phase == 0:
        fast.bid(0 if fast.legal_bids() & 1 else 1)
    hands = [fast.hand_mask(s) for s in range(4)]
    swapped = [hands[1], hands[0], hands[2], hands[3]]
    fast.set_hands(swapped)
    assert [fast.hand_mask(s) for s in range(4)] == swapped
    assert fast.legal_mask() == swapped[fast.to_act or 0]
    with pytest.raises(IllegalActionError, match="another size"):
        fast.set_hands([hands[0] | hands[1], 0, hands[2], hands[3]])


@pytest.mark.parametrize("kind", KINDS)
def test_illegal_actions_and_seeds_are_refused(kind: str) -> None:
    fast = MAKERS[kind](preset("oh-hell"), 4, 1)
    with pytest.raises(IllegalActionError):
        fast.play(0)
    with pytest.raises(IllegalActionError):
        fast.bid(fast.hand_size + 1)
    with pytest.raises(InvalidSeedError):
        fast.playout(-1)
    with pytest.raises(InvalidSeedError):
        MAKERS[kind](preset("oh-hell"), 4, MAX_SEED + 1)


def test_the_compiled_core_is_built_where_a_compiler_is() -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the engine plays through the reference")
    assert core._compiled is not None, "setup.py did not build engine/_core.pyx"
    assert core.compiled_available() or os.environ.get("OHHELL_ENGINE_CORE") == "reference"
