"""A memorising bot: the test of independent ladder deals plays it
(tests/tournaments/test_memorising_bot.py).

The bot answers the arena like any other (the first legal action) and remembers, for every
deal it plays, the hand it was dealt, the turned card and every card it sees played, by seat.
At the first request of every deal it looks for a deal it played before, in another match, in
which one seat's cards are all in its hand and the turned card is the same: that is the same
deal replayed, and since the seats keep their clockwise order, the seat ``d`` places after that
one then holds what the seat ``d`` places after the bot holds now. It predicts every other
seat's hand from the cards it remembers, filled from the fixed random draw of the spying bot
(tests/support/spying.py) where it remembers too few, and from that draw alone when it
recognises no deal.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

from tests.support.spying import Prediction, predict, serve_first_legal

# A remembered seat must account for all but this many cards of the bot's hand: the seats
# that play after the bot in a deal's last trick keep a card it never sees.
UNSEEN_PER_SEAT = 1


@dataclass
class Remembered:
    """One deal as the bot saw it: the turned card and the cards it knows of each seat."""

    match_id: str
    deal: int
    players: int
    hand_size: int
    trump_card: str | None
    cards: dict[int, set[str]]  # seat -> the cards it was seen to hold

    def seat_holding(self, hand: frozenset[str], trump_card: str | None) -> int | None:
        """The seat of this deal that was dealt ``hand``, if the deal is the same."""
        if trump_card != self.trump_card or len(hand) != self.hand_size:
            return None
        for seat, cards in self.cards.items():
            if len(cards) >= self.hand_size - UNSEEN_PER_SEAT and cards <= hand:
                return seat
        return None


@dataclass
class Memoriser:
    """The bot's state across requests: what it remembers and what it predicted."""

    deals: dict[tuple[str, int], Remembered] = field(default_factory=dict)
    predictions: list[Prediction] = field(default_factory=list)
    # The predictions made from a remembered deal, as (match id, deal).
    recognised: set[tuple[str, int]] = field(default_factory=set)
    turn: threading.Lock = field(default_factory=threading.Lock)  # one request at a time

    def on_request(self, body: dict) -> None:
        """Remember what this request shows; at a deal's first request, predict the others."""
        key = (body["match_id"], body["deal"])
        players = body["players"]
        with self.turn:
            seen = self.deals.get(key)
            if seen is None:
                self.predictions.append(self.predict(body))
                seen = self.deals[key] = Remembered(
                    match_id=body["match_id"],
                    deal=body["deal"],
                    players=players,
                    hand_size=body["hand_size"],
                    trump_card=body["trump_card"],
                    cards={body["seat"]: set(body["hand"])},
                )
            tricks = [*body["tricks"], *([body["trick"]] if body["trick"] else [])]
            for trick in tricks:
                for i, card in enumerate(trick["cards"]):
                    seen.cards.setdefault((trick["leader"] + i) % players, set()).add(card)

    def predict(self, body: dict) -> Prediction:
        """Every other seat's hand, from a remembered deal when the bot recognises one."""
        guess = predict(body, None)
        hand, trump_card = frozenset(body["hand"]), body["trump_card"]
        for (match_id, _), old in self.deals.items():
            if match_id == body["match_id"] or old.players != body["players"]:
                continue
            held = old.seat_holding(hand, trump_card)
            if held is None:
                continue
            players, seat, size = body["players"], body["seat"], body["hand_size"]
            known = {
                other: frozenset(old.cards.get((held + other - seat) % players, set()))
                for other in guess.predicted
            }
            spare = [
                c
                for s in sorted(guess.predicted)
                for c in sorted(guess.predicted[s])
                if not any(c in cards for cards in known.values())
            ]
            for other, cards in known.items():
                fill, spare = spare[: size - len(cards)], spare[size - len(cards) :]
                guess.predicted[other] = cards | frozenset(fill)
            self.recognised.add((body["match_id"], body["deal"]))
            break
        return guess


def serve_memoriser(memoriser: Memoriser) -> ThreadingHTTPServer:
    """Serve the memorising bot on a free loopback port, in a thread."""
    return serve_first_legal("memoriser", memoriser.on_request)
