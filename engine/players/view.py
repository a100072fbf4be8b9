"""One seat's view of a deal, read from its observation into bit masks for the policies.

Only the observation is read (never a ``Game``), so the players work the same behind HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.cards import CARD_INDEX, SUITS, mask_of


@dataclass(slots=True)
class View:
    """What the seat to act knows of the current deal, as masks and ints."""

    seat: int
    players: int
    dealer: int
    hand_size: int
    hand: int
    trump: int
    trump_card: int
    trump_holder: int
    must_trump: bool
    bids: list[int]
    won: list[int]
    played: int
    played_by: list[int]
    voids: list[int]
    trick: list[int]
    leader: int

    @property
    def gone(self) -> int:
        """Cards no other seat can hold: those played, plus a turned card left in the stock."""
        if self.trump_card >= 0 and self.trump_holder < 0:
            return self.played | 1 << self.trump_card
        return self.played

    @property
    def need(self) -> int:
        """Tricks the seat still needs for its bid (negative when already over)."""
        return self.bids[self.seat] - self.won[self.seat]

    def cards_left(self, seat: int) -> int:
        """How many cards ``seat`` still holds."""
        return self.hand_size - self.played_by[seat]


def read_view(obs: dict[str, Any]) -> View:
    """Turn an observation into a View (voids come from failures to follow or to trump)."""
    n = obs["players"]
    trump = SUITS.index(obs["trump"]) if obs["trump"] else -1
    must_trump = bool(obs["variant"].get("must_trump"))
    holder = obs.get("trump_card_holder")
    view = View(
        seat=obs["seat"],
        players=n,
        dealer=obs["dealer"],
        hand_size=obs["hand_size"],
        hand=mask_of(obs["hand"]),
        trump=trump,
        trump_card=CARD_INDEX[obs["trump_card"]] if obs["trump_card"] else -1,
        trump_holder=holder if holder is not None else -1,
        must_trump=must_trump,
        bids=[-1 if b is None else b for b in obs["bids"]],
        won=list(obs["tricks_won"]),
        played=0,
        played_by=[0] * n,
        voids=[0] * n,
        trick=[],
        leader=obs["eldest"],
    )
    for trick in obs["tricks"]:
        _read_trick(view, trick["leader"], trick["cards"])
        view.leader = trick["winner"]
    current = obs.get("trick")
    if current:
        view.trick = _read_trick(view, current["leader"], current["cards"])
        view.leader = current["leader"]
    return view


def _read_trick(view: View, leader: int, names: list[str]) -> list[int]:
    """Record a trick's cards as played, and the voids its discards reveal."""
    cards = [CARD_INDEX[name] for name in names]
    n, trump = view.players, view.trump
    led = cards[0] // 13 if cards else -1
    for i, card in enumerate(cards):
        seat = (leader + i) % n
        view.played |= 1 << card
        view.played_by[seat] += 1
        suit = card // 13
        if suit != led:
            view.voids[seat] |= 1 << led
            if view.must_trump and trump >= 0 and suit != trump:
                view.voids[seat] |= 1 << trump
    return cards
