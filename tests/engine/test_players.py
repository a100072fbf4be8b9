"""Reference players: legal actions everywhere, only the observation, seeded, within budget."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from engine import PRESETS, Game, preset
from engine.cards import CARD_INDEX, SUIT_MASKS, mask_of
from engine.players import HeuristicPlayer, Player, SearchPlayer, make_player, sim
from engine.players.policy import choose_card
from engine.players.view import read_view
from engine.simulate import derive_seed, play_game, seat_names, simulate

PLAYER_KINDS = ("random", "heuristic", "search")


class Checked:
    """Wraps a player and asserts each answer is one of the legal actions it was offered."""

    def __init__(self, player: Player) -> None:
        self.player = player
        self.name = player.name
        self.calls = 0

    def bid(self, obs, legal):
        choice = self.player.bid(obs, legal)
        assert choice in legal
        self.calls += 1
        return choice

    def play(self, obs, legal):
        choice = self.player.play(obs, legal)
        assert choice in legal
        self.calls += 1
        return choice


def _short(variant_name):
    # Three deals keep the sweep fast; the schedule still starts at each preset's own size.
    return preset(variant_name, deals=3)


def _cast(players, seed):
    return [
        Checked(
            make_player(PLAYER_KINDS[s % 3], seed + s, **({"samples": 2} if s % 3 == 2 else {}))
        )
        for s in range(players)
    ]


@pytest.mark.parametrize("name", list(PRESETS))
def test_players_always_return_a_legal_action_in_every_preset_and_player_count(name) -> None:
    variant = _short(name)
    for players in range(variant.min_players, variant.max_players + 1):
        seats = _cast(players, players)
        game = play_game(variant, players, 7, seats)
        assert game.is_over
        assert all(seat.calls > 0 for seat in seats)


def test_players_finish_whole_games_of_one_card_deals_and_closed_bidding() -> None:
    variant = preset("british-oh-hell", bidding="closed", deals=2)
    game = play_game(variant, 5, 3, _cast(5, 3))
    assert game.is_over


def test_player_modules_never_import_the_game() -> None:
    # Players see only observations, so they can run behind HTTP exactly as they run here.
    folder = Path(__file__).resolve().parents[2] / "engine" / "players"
    for path in folder.glob("*.py"):
        text = path.read_text()
        assert "engine.game" not in text, path.name
        assert "import Game" not in text, path.name


@pytest.mark.parametrize("kind", PLAYER_KINDS)
def test_a_player_decides_the_same_from_an_observation_sent_as_json(kind) -> None:
    game = Game(preset("oh-hell"), 4, 11)
    direct = make_player(kind, 5, **({"samples": 3} if kind == "search" else {}))
    remote = make_player(kind, 5, **({"samples": 3} if kind == "search" else {}))
    for _ in range(60):
        seat, obs = game.acting_seat, game.observation(game.acting_seat)
        wire = json.loads(json.dumps(obs))
        legal = game.legal_actions()
        method = "bid" if game.phase == "bid" else "play"
        action = getattr(direct, method)(obs, legal)
        assert getattr(remote, method)(wire, tuple(json.loads(json.dumps(legal)))) == action
        game.apply(action, seat)


@pytest.mark.parametrize("kind", PLAYER_KINDS)
def test_players_are_deterministic_from_their_seed(kind) -> None:
    options = {"samples": 2} if kind == "search" else {}
    variant = _short("oh-hell")

    def totals(seed):
        seats = [make_player(kind, seed + s, **options) for s in range(4)]
        return play_game(variant, 4, 1, seats).replay()

    assert totals(3) == totals(3)


def test_different_seeds_give_the_random_player_different_games() -> None:
    variant = _short("oh-hell")
    games = [
        play_game(variant, 4, 1, [make_player("random", seed * 10 + s) for s in range(4)])
        for seed in (1, 2)
    ]
    assert games[0].replay() != games[1].replay()


def _dealer_to_bid(variant_name="oh-hell", seed=0):
    game = Game(preset(variant_name), 4, seed)
    while game.to_act != game.dealer:
        game.bid(0)
    return game


def test_heuristic_dealer_respects_the_hook() -> None:
    for seed in range(30):
        game = _dealer_to_bid(seed=seed)
        forbidden = game.forbidden_bid()
        bid = HeuristicPlayer(seed).bid(game.observation(game.dealer), game.legal_bids())
        assert bid != forbidden
        assert bid in game.legal_bids()


def test_heuristic_takes_the_nearest_legal_bid_when_the_hook_forbids_its_choice() -> None:
    game = _dealer_to_bid(seed=4)
    obs = game.observation(game.dealer)
    everything = tuple(range(game.hand_size + 1))
    natural = HeuristicPlayer(0).bid(obs, everything)
    hooked = tuple(b for b in everything if b != natural)
    assert abs(HeuristicPlayer(0).bid(obs, hooked) - natural) == 1


def test_heuristic_wins_with_its_cheapest_winner_when_it_needs_a_trick_and_plays_last() -> None:
    hand = mask_of(["AH", "KH", "3H", "2C"])
    trick = [CARD_INDEX["QH"], CARD_INDEX["5H"], CARD_INDEX["4H"]]
    legal = hand & SUIT_MASKS[2]
    card = choose_card(hand, legal, trick, 0, 0, need=1, players=4)
    assert card == CARD_INDEX["KH"]


def test_heuristic_ducks_with_its_highest_loser_once_its_bid_is_made() -> None:
    hand = mask_of(["AH", "JH", "3H", "2C"])
    trick = [CARD_INDEX["QH"], CARD_INDEX["5H"], CARD_INDEX["4H"]]
    legal = hand & SUIT_MASKS[2]
    card = choose_card(hand, legal, trick, 0, 0, need=0, players=4)
    assert card == CARD_INDEX["JH"]


def test_heuristic_with_full_noise_still_plays_legally_and_bad_noise_is_refused() -> None:
    game = play_game(
        _short("oh-hell"), 4, 2, [Checked(HeuristicPlayer(s, noise=1.0)) for s in range(4)]
    )
    assert game.is_over
    with pytest.raises(ValueError, match="noise"):
        make_player("heuristic", 0, noise=1.5)


def test_make_player_refuses_unknown_names_and_options() -> None:
    with pytest.raises(ValueError, match="unknown player 'mcts'"):
        make_player("mcts", 0)
    with pytest.raises(ValueError, match="bad options for player 'random'"):
        make_player("random", 0, samples=3)
    with pytest.raises(ValueError, match="samples"):
        make_player("search", 0, samples=0)


def _mid_deal(seed=5, actions=22, variant_name="oh-hell"):
    game = Game(preset(variant_name), 4, seed)
    players = [make_player("heuristic", s) for s in range(4)]
    for _ in range(actions):
        seat = game.acting_seat
        obs = game.observation(seat)
        player = players[seat]
        if game.phase == "bid":
            game.apply(player.bid(obs, game.legal_bids()), seat)
        else:
            game.apply(player.play(obs, game.legal_cards()), seat)
    return game


def test_search_respects_its_sample_budget(monkeypatch) -> None:
    game = _mid_deal()
    calls = []
    real = sim.sample_hands

    def counting(view, rng):
        calls.append(1)
        return real(view, rng)

    monkeypatch.setattr("engine.players.search.sample_hands", counting)
    SearchPlayer(1, samples=5).play(game.observation(game.to_act), game.legal_cards())
    assert len(calls) == 5 or len(game.legal_cards()) == 1


def test_search_stops_at_its_time_budget() -> None:
    game = _mid_deal(actions=2)
    player = SearchPlayer(1, samples=10**6, max_ms=20)
    started = time.perf_counter()
    player.bid(game.observation(game.to_act), game.legal_bids())
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("variant_name", ["oh-hell", "la-podrida", "oh-well"])
def test_sampled_deals_agree_with_everything_the_seat_has_seen(variant_name) -> None:
    game = _mid_deal(seed=9, actions=24, variant_name=variant_name)
    seat = game.to_act
    view = read_view(game.observation(seat))
    import random

    rng = random.Random(0)
    for _ in range(20):
        hands = sim.sample_hands(view, rng)
        assert hands[seat] == view.hand
        seen = view.hand | view.played
        for other in range(4):
            assert hands[other].bit_count() == view.cards_left(other)
            if other != seat:
                assert not hands[other] & seen
                for suit in range(4):
                    if view.voids[other] >> suit & 1:
                        assert not hands[other] & SUIT_MASKS[suit]
        union = 0
        for hand in hands:
            assert not union & hand
            union |= hand
        if view.trump_holder >= 0 and not view.played >> view.trump_card & 1:
            assert hands[view.trump_holder] >> view.trump_card & 1


def test_simulate_rotates_seats_and_summarises_each_player_type() -> None:
    summary = simulate(_short("oh-hell"), 4, 1, ["heuristic", "random"] * 2, 4)
    assert seat_names(["a", "b", "c", "d"], 1) == ["b", "c", "d", "a"]
    assert summary.games == 4
    rows = {row["player"]: row for row in summary.table()}
    assert set(rows) == {"heuristic", "random"}
    assert rows["heuristic"]["win_share"] + rows["random"]["win_share"] == pytest.approx(1.0)
    assert 0.0 <= rows["random"]["exact_bid_rate"] <= 1.0


def test_simulate_is_deterministic_from_its_seed_and_reports_progress() -> None:
    seen = []
    first = simulate(
        _short("blackout"),
        3,
        8,
        ["heuristic", "random", "random"],
        3,
        progress=lambda done, total: seen.append((done, total)),
    )
    second = simulate(_short("blackout"), 3, 8, ["heuristic", "random", "random"], 3)
    assert first.table() == second.table()
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert derive_seed(8, 1) != derive_seed(8, 2)
