"""A colluding seat: it sees a partner's hand and plays to let the partner make its bid.

Not a reference player of ``make_player``: it needs what no honest seat has (the partner's seat
and hand), which its caller supplies. It exists to measure and test the collusion detector
(tournaments/maths/collusion.py, bench/bench_collusion.py): it bids as the heuristic does, so its
bids look honest, and then gives up its own bid for the partner's:

- while the partner still needs tricks, it keeps out of the partner's way (plays under a trick
  the partner is winning, plays low before the partner, leads into a suit the partner holds the
  best card of);
- once the partner has its tricks, it takes tricks off the partner (overtakes a trick the
  partner is winning, plays high before the partner so it can play under, leads high).
"""

from __future__ import annotations

from typing import Any

from engine.cards import CARD_NAMES, SUIT_MASKS, card_indices, mask_of
from engine.players.heuristic import HeuristicPlayer
from engine.players.policy import beats, is_master, value, winning_card
from engine.players.view import View, read_view


class HelpingPlayer(HeuristicPlayer):
    """Bids as the heuristic; with its partner at the table, plays for it (``play_for``), and
    without it plays as the heuristic does."""

    name = "helping"

    def play_for(
        self, obs: dict[str, Any], legal: tuple[str, ...], partner: int, hand: list[str]
    ) -> str:
        """The card to play for the partner at seat ``partner`` holding ``hand`` now."""
        if len(legal) == 1:
            return legal[0]
        view = read_view(obs)
        return CARD_NAMES[help_card(view, mask_of(legal), partner, mask_of(hand) & ~view.played)]


def help_card(view: View, legal: int, partner: int, partner_hand: int) -> int:
    """The legal card that best lets ``partner`` (holding ``partner_hand``) make its bid."""
    cards = card_indices(legal)
    trump = view.trump
    low = min(cards, key=lambda c: value(c, trump))
    high = max(cards, key=lambda c: value(c, trump))
    wants = view.bids[partner] - view.won[partner] > 0
    if not view.trick:
        if not wants:
            return high
        # Lead low into a suit whose best card the partner holds, so the partner wins it.
        known = view.hand | partner_hand | view.gone
        for card in sorted(cards, key=lambda c: value(c, trump)):
            suit = SUIT_MASKS[card // 13]
            for theirs in card_indices(partner_hand & suit):
                if theirs > card and is_master(theirs, known, view.gone):
                    return card
        return low
    best = winning_card(view.trick, trump)
    winner = (view.leader + view.trick.index(best)) % view.players
    played = (partner - view.leader) % view.players < len(view.trick)
    wins = [c for c in cards if beats(c, best, trump)]
    loses = [c for c in cards if not beats(c, best, trump)]
    if played and winner == partner:
        if wants:  # leave it the trick
            return max(loses, key=lambda c: value(c, trump)) if loses else low
        return min(wins, key=lambda c: value(c, trump)) if wins else high  # take it off it
    if played:
        return low  # the partner has lost this trick: nothing to do for it
    return low if wants else high
