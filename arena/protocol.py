"""The ``ohhell/1`` messages: building requests from observations, parsing answers strictly.

Nothing a bot answers reaches the engine before ``parse_bid`` or ``parse_card`` has checked it
against the exact legal list the bot was sent. The documented fallback for a faulty answer is
deterministic and deliberately weak, so a fault never pays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from arena.faults import BotIllegalActionError, BotWrongShapeError, make_sample
from arena.wire import PartlyEncoded, SharedText
from engine.cards import CARD_INDEX
from engine.observation import observe

if TYPE_CHECKING:
    from engine.game import Game

PROTOCOL = "ohhell/1"
MESSAGE_TYPES = ("hello", "bid", "play", "result")  # hello is built by arena.transport


def decision_message(
    kind: str,
    observation: dict[str, Any],
    legal: Sequence[int] | Sequence[str],
    *,
    match_id: str,
    time_limit_ms: int,
) -> dict[str, Any]:
    """Return a ``bid`` or ``play`` request: the seat's observation plus ``legal``."""
    message: dict[str, Any] = {
        "protocol": PROTOCOL,
        "type": kind,
        "match_id": match_id,
        "time_limit_ms": time_limit_ms,
        "legal": list(legal),
    }
    message.update(observation)
    return message


class DecisionRequests:
    """Build one match's ``bid`` and ``play`` requests, keeping the shared parts encoded.

    Each request is ``decision_message`` of the seat's whole observation. The parts every seat
    shares (``engine.observation.SHARED_KEYS``) are not rebuilt for every request: they travel
    as JSON text (``PartlyEncoded``), re-encoded only when the engine says they changed.
    """

    __slots__ = ("_game", "_match_id", "_shared")

    def __init__(self, game: Game, match_id: str) -> None:
        self._game = game
        self._match_id = match_id
        self._shared = SharedText(game)

    def build(
        self,
        kind: str,
        seat: int,
        legal: Sequence[int] | Sequence[str],
        *,
        time_limit_ms: int,
        to_act: int | None = None,
    ) -> PartlyEncoded:
        """Return the request asking ``seat`` for a decision; ``to_act`` overrides the turn."""
        observation = observe(self._game, seat, shared=False)
        if to_act is not None:
            observation["to_act"] = to_act
        message = decision_message(
            kind, observation, legal, match_id=self._match_id, time_limit_ms=time_limit_ms
        )
        return PartlyEncoded(message, self._shared.tail())


def result_message(
    *,
    match_id: str,
    seat: int,
    totals: Sequence[int],
    ranks: Sequence[int],
    disqualified: Sequence[bool],
    faults: int,
) -> dict[str, Any]:
    """Return the ``result`` message sent to each seat when a match ends."""
    return {
        "protocol": PROTOCOL,
        "type": "result",
        "match_id": match_id,
        "seat": seat,
        "players": len(totals),
        "totals": list(totals),
        "ranks": list(ranks),
        "disqualified": list(disqualified),
        "faults": faults,
    }


def parse_bid(answer: Any, legal: Sequence[int]) -> int:
    """Return the bid in ``{"bid": <int>}`` if it is one of ``legal``; raise a fault otherwise."""
    if not isinstance(answer, dict) or "bid" not in answer:
        raise BotWrongShapeError(
            'a bid answer must be a JSON object {"bid": <integer>}', sample=_sample(answer)
        )
    bid = answer["bid"]
    if type(bid) is not int:
        raise BotWrongShapeError(f"bid must be an integer, not {bid!r}", sample=_sample(answer))
    if bid not in legal:
        raise BotIllegalActionError(
            f"bid {bid} is not among the legal bids {list(legal)}", sample=_sample(answer)
        )
    return bid


def parse_card(answer: Any, legal: Sequence[str]) -> str:
    """Return the card in ``{"card": "<card>"}`` if it is one of ``legal``; raise otherwise."""
    if not isinstance(answer, dict) or "card" not in answer:
        raise BotWrongShapeError(
            'a play answer must be a JSON object {"card": "<card>"}', sample=_sample(answer)
        )
    card = answer["card"]
    if not isinstance(card, str):
        raise BotWrongShapeError(f"card must be a string, not {card!r}", sample=_sample(answer))
    if card not in legal:
        reason = "not among the legal cards" if card in CARD_INDEX else "not a card"
        raise BotIllegalActionError(
            f"card {card[:8]!r} is {reason} {list(legal)}", sample=_sample(answer)
        )
    return card


def fallback_bid(legal: Sequence[int]) -> int:
    """The documented fallback bid: the lowest legal bid."""
    return min(legal)


def fallback_card(legal: Sequence[str]) -> str:
    """The documented fallback card: the lowest-ranked legal card (clubs before diamonds...)."""
    return min(legal, key=lambda card: (CARD_INDEX[card] % 13, CARD_INDEX[card] // 13))


def _sample(answer: Any) -> str | None:
    return make_sample(repr(answer))
