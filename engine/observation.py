"""What one seat may know (docs/rules.md section 4), and nothing else.

Built only from public facts plus the seat's own hand: other hands, the stock, removed cards
and the seed never enter it. Under closed bidding other bids stay hidden until all are made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.cards import CARD_NAMES, card_names
from engine.errors import InvalidSeatError
from engine.variant import Bidding, Trump, Variant

if TYPE_CHECKING:
    from engine.game import Game

_card_name = CARD_NAMES.__getitem__
# Read once: an observation is built for every decision, and a member read off its Enum class
# is slow on Python 3.11 (see engine/game.py).
_CLOSED, _DEALER_LAST_CARD = Bidding.CLOSED, Trump.DEALER_LAST_CARD


def observe(game: Game, seat: int) -> dict[str, Any]:
    """Return the JSON-ready view of ``game`` for ``seat``."""
    if type(seat) is not int or not 0 <= seat < game.players:
        raise InvalidSeatError(f"seat must be 0..{game.players - 1}, not {seat!r}")
    n = game.players
    v = game.variant
    deals = game.deals
    deal = deals[-1]
    bids = deal.bids
    all_bid = min(bids) >= 0  # a seat yet to bid holds -1
    played = list(map(_card_name, deal.plays))
    return {
        "variant": game.variant_dict(),
        "players": n,
        "seat": seat,
        "phase": game.phase,
        "to_act": game.to_act,
        "deal": len(deals),
        "deals": _deal_count(game),
        "schedule": list(game.schedule),
        "dealer": deal.dealer,
        "eldest": (deal.dealer + 1) % n,
        "hand_size": deal.hand_size,
        "hand": list(card_names(game.hand_mask(seat))),
        "trump": _suit(deal.trump),
        "trump_card": _trump_card(deal),
        "trump_card_holder": _trump_card_holder(v, deal),
        "bids": _visible_bids(bids, seat, v.bidding is _CLOSED and not all_bid),
        "over_under": _over_under(deal) if v.announce_over_under and all_bid else None,
        "tricks": _tricks(deal, played, n),
        "trick": _current_trick(deal, played, n),
        "tricks_won": list(deal.tricks_won),
        "scores": list(game.totals),
        "history": _history(game),
    }


def _deal_count(game: Game) -> int | None:
    return None if game.variant.target_score is not None else len(game.schedule)


def _trump_card(deal: Any) -> str | None:
    return CARD_NAMES[deal.trump_card] if deal.trump_card >= 0 else None


def _trump_card_holder(variant: Variant, deal: Any) -> int | None:
    return deal.dealer if variant.trump is _DEALER_LAST_CARD and deal.trump_card >= 0 else None


def _suit(trump: int) -> str | None:
    return "CDHS"[trump] if trump >= 0 else None


def _visible_bids(bids: list[int], seat: int, hidden: bool) -> list[int | None]:
    if not hidden:
        return [b if b >= 0 else None for b in bids]
    return [b if b >= 0 and s == seat else None for s, b in enumerate(bids)]


def _over_under(deal: Any) -> str:
    total = sum(deal.bids)
    if total > deal.hand_size:
        return "over"
    return "under" if total < deal.hand_size else "even"


def _tricks(deal: Any, played: list[str], n: int) -> list[dict[str, Any]]:
    return [
        {"leader": leader, "cards": played[t : t + n], "winner": winner}
        for t, leader, winner in zip(
            range(0, len(played), n), deal.leaders, deal.winners, strict=False
        )
    ]


def _current_trick(deal: Any, played: list[str], n: int) -> dict[str, Any] | None:
    """The trick in progress, if any."""
    done = len(deal.winners)
    if len(deal.leaders) == done:
        return None
    return {"leader": deal.leaders[-1], "cards": played[done * n :]}


def _history(game: Game) -> list[dict[str, Any]]:
    return [
        # [*x] copies a list as list(x) does, without looking up and calling ``list``.
        {"bids": [*d.bids], "tricks_won": [*d.tricks_won], "scores": [*d.scores]}
        for d in game.deals[: game.finished_deals()]
    ]
