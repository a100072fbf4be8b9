"""The helping seat: with its partner's hand it plays for the partner, at its own cost."""

from __future__ import annotations

from engine.game import Game, Phase
from engine.players import HeuristicPlayer
from engine.players.colluding import HelpingPlayer
from engine.presets import preset
from engine.simulate import derive_seed

GAMES = 60


def _season(helping: bool) -> tuple[float, float]:
    """Mean totals of seat 0 (the beneficiary) and seat 1 (its partner, helping or not) over
    the same deals, the other two seats honest heuristics."""
    ours = theirs = 0.0
    for g in range(GAMES):
        seed = derive_seed(77, g)
        game = Game(preset("oh-hell"), 4, seed)
        players = [HeuristicPlayer(derive_seed(seed, s)) for s in range(4)]
        helper = HelpingPlayer(derive_seed(seed, 1))
        if helping:
            players[1] = helper
        while not game.is_over:
            seat = game.acting_seat
            obs = game.observation(seat)
            if game.phase is Phase.BID:
                game.bid(players[seat].bid(obs, game.legal_bids()), seat)
            elif seat == 1 and helping:
                hand = game.observation(0)["hand"]
                game.play(helper.play_for(obs, game.legal_cards(), 0, hand), seat)
            else:
                game.play(players[seat].play(obs, game.legal_cards()), seat)
        ours += game.totals[0] / GAMES
        theirs += game.totals[1] / GAMES
    return ours, theirs


def test_a_helping_partner_raises_the_beneficiarys_total_and_lowers_its_own() -> None:
    honest_beneficiary, honest_partner = _season(helping=False)
    helped_beneficiary, helping_partner = _season(helping=True)
    assert helped_beneficiary > honest_beneficiary + 8
    assert helping_partner < honest_partner - 20


def test_the_helping_seat_bids_as_the_heuristic_does() -> None:
    game = Game(preset("oh-hell"), 4, 5)
    obs = game.observation(game.acting_seat)
    legal = game.legal_bids()
    assert HelpingPlayer(3).bid(obs, legal) == HeuristicPlayer(3).bid(obs, legal)
