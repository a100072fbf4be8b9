"""Property tests over random valid variants, player counts and seeds, with random legal play.

Each game is checked at every step against rules worked out here from card names alone:
cards accounted for, legal actions, trick winners, the hook, and what each seat may see.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    CardNotInHandError,
    FollowSuitError,
    Game,
    HookViolationError,
    IllegalActionError,
    InvalidReplayError,
    MustTrumpError,
    Variant,
    preset,
    replay_game,
)
from engine.cards import card_names
from tests.support.engine import play_random, trick_winner
from tests.support.engine_strategies import variant_and_players

ALL_CARDS = [r + s for s in "CDHS" for r in "23456789TJQKA"]
CARD = re.compile(rb'"([2-9TJQKA][CDHS])"')
SEEDS = st.integers(0, 2**63 - 1)
PROPERTY = settings(max_examples=60, deadline=None)


def expected_legal_cards(
    hand: list[str], trick: list[str], trump: str | None, must_trump: bool
) -> set[str]:
    if not trick:
        return set(hand)
    follow = {c for c in hand if c[1] == trick[0][1]}
    if follow:
        return follow
    trumps = {c for c in hand if trump is not None and c[1] == trump}
    return trumps if must_trump and trumps else set(hand)


def check_cards_accounted_for(game: Game) -> None:
    deal = game.deals[-1]
    n = game.players
    dealt = [set(card_names(h)) for h in deal.hands]
    assert sum(len(h) for h in dealt) == len(set().union(*dealt)) == n * deal.hand_size
    hands = [set(game.hand(s)) for s in range(n)]
    played = [ALL_CARDS[c] for c in deal.plays]
    assert len(played) == len(set(played))
    assert sum(len(h) for h in hands) + len(played) == n * deal.hand_size
    for seat in range(n):
        assert hands[seat] <= dealt[seat]
    assert set().union(*hands) | set(played) == set().union(*dealt)
    rest = set(ALL_CARDS) - set().union(*dealt)  # the stock and any removed cards
    assert len(rest) == 52 - n * deal.hand_size
    if deal.trump_card >= 0:
        turned = ALL_CARDS[deal.trump_card]
        if game.variant.trump == "dealer_last_card":
            assert turned in dealt[deal.dealer]
        else:
            assert turned in rest


def check_bidding(game: Game) -> None:
    h, seat = game.hand_size, game.to_act
    allowed = set(range(h + 1))
    others = [b for s, b in enumerate(game.bids) if s != seat]
    if game.variant.hook and seat == game.dealer:
        allowed.discard(h - sum(others))  # type: ignore[arg-type]
    assert set(game.legal_bids()) == allowed
    for bid in set(range(-1, h + 2)) - allowed:
        error = HookViolationError if 0 <= bid <= h else IllegalActionError
        try:
            game.bid(bid)
        except error:
            continue
        raise AssertionError(f"bid {bid} was accepted")


def check_play(game: Game) -> None:
    hand = list(game.hand(game.acting_seat))
    legal = expected_legal_cards(hand, game.trick, game.trump, game.variant.must_trump)
    assert set(game.legal_cards()) == legal
    for card in set(hand) - legal:
        try:
            game.play(card)
        except (FollowSuitError, MustTrumpError):
            continue
        raise AssertionError(f"{card} was accepted")
    elsewhere = next(c for c in ALL_CARDS if c not in hand)
    try:
        game.play(elsewhere)
    except CardNotInHandError:
        return
    raise AssertionError("a card from outside the hand was accepted")


def check_observations(game: Game) -> None:
    deal = game.deals[-1]
    played = {ALL_CARDS[c] for d in game.deals for c in d.plays}
    turned = {ALL_CARDS[deal.trump_card]} if deal.trump_card >= 0 else set()
    all_bid = all(b >= 0 for b in deal.bids)
    for seat in range(game.players):
        view = game.observation(seat)
        allowed = set(card_names(deal.hands[seat])) | played | turned
        assert {card.decode() for card in CARD.findall(orjson.dumps(view))} <= allowed
        if game.variant.bidding == "closed" and not all_bid:
            assert all(b is None for s, b in enumerate(view["bids"]) if s != seat)


def check_tricks(game: Game) -> None:
    for deal in game.deals:
        n = game.players
        trump = "CDHS"[deal.trump] if deal.trump >= 0 else None
        for t, winner in enumerate(deal.winners):
            cards = [ALL_CARDS[c] for c in deal.plays[t * n : (t + 1) * n]]
            assert winner == trick_winner(cards, deal.leaders[t], n, trump)
        assert sum(deal.tricks_won) == len(deal.winners)


def play_checked(variant: Variant, players: int, seed: int, observe: bool = True) -> Game:
    game = Game(variant, players, seed)
    rng = random.Random(seed)
    while not game.is_over:
        check_cards_accounted_for(game)
        if observe:
            check_observations(game)
        if game.phase == "bid":
            check_bidding(game)
        else:
            check_play(game)
        actions = game.legal_actions()
        game.apply(actions[rng.randrange(len(actions))])
    check_tricks(game)
    return game


@PROPERTY
@given(variant_and_players(), SEEDS)
def test_random_legal_play_keeps_every_rule(case: tuple[Variant, int], seed: int) -> None:
    variant, players = case
    game = play_checked(variant, players, seed)
    assert len(game.deals) <= len(variant.schedule(players))
    assert game.totals == [
        sum(d.scores[s] for d in game.deals) + game.bonus[s] for s in range(players)
    ]


@PROPERTY
@given(variant_and_players(), SEEDS)
def test_a_replay_round_trips_and_replays_to_the_same_scores(
    case: tuple[Variant, int], seed: int
) -> None:
    variant, players = case
    game = play_random(Game(variant, players, seed), random.Random(seed))
    data = json.loads(json.dumps(game.replay()))
    again = replay_game(data)
    assert again.totals == game.totals
    assert again.replay() == data


@PROPERTY
@given(variant_and_players(), SEEDS, st.data())
def test_a_tampered_replay_is_refused(
    case: tuple[Variant, int], seed: int, data: st.DataObject
) -> None:
    variant, players = case
    record = json.loads(
        json.dumps(play_random(Game(variant, players, seed), random.Random(seed)).replay())
    )
    deal = data.draw(st.sampled_from(record["deals"]))
    trick = data.draw(st.sampled_from(deal["tricks"]))
    what = data.draw(st.sampled_from(["card", "winner", "score", "seed", "tricks_won"]))
    if what == "card":
        hand = deal["hands"][trick["leader"]]
        if len(hand) < 2:
            return
        trick["cards"][0] = next(c for c in hand if c != trick["cards"][0])
    elif what == "winner":
        trick["winner"] = (trick["winner"] + 1) % players
    elif what == "score":
        deal["scores"][0] += 1
    elif what == "seed":
        record["seed"] = (record["seed"] + 1) % 2**63
    else:
        deal["tricks_won"][0] += 1
    try:
        replay_game(record)
    except InvalidReplayError:
        return
    raise AssertionError(f"a changed {what} was not noticed")


@PROPERTY
@given(variant_and_players(), SEEDS)
def test_the_same_seed_gives_the_same_game(case: tuple[Variant, int], seed: int) -> None:
    variant, players = case
    first = play_random(Game(variant, players, seed), random.Random(seed)).replay()
    second = play_random(Game(variant, players, seed), random.Random(seed)).replay()
    assert first == second


HASH_SCRIPT = """
import hashlib, json, random, sys
from engine import Game, preset
from tests.support.engine import play_random
out = hashlib.sha256()
for name, players, seed in [("oh-hell", 4, 1), ("nomination-whist", 6, 2), ("oh-well", 3, 3)]:
    game = play_random(Game(preset(name), players, seed), random.Random(seed))
    out.update(json.dumps(game.replay(), sort_keys=True).encode())
print(out.hexdigest())
"""


def test_games_are_the_same_whatever_the_hash_seed() -> None:
    root = Path(__file__).resolve().parents[2]
    digests = set()
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", HASH_SCRIPT],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(done.stdout.strip())
    local = hashlib.sha256()
    for name, players, seed in [("oh-hell", 4, 1), ("nomination-whist", 6, 2), ("oh-well", 3, 3)]:
        game = play_random(Game(preset(name), players, seed), random.Random(seed))
        local.update(json.dumps(game.replay(), sort_keys=True).encode())
    assert digests == {local.hexdigest()}
