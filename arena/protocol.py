"""The ``ohhell/1`` messages: building requests from observations, parsing answers strictly.

Nothing a bot answers reaches the engine before ``parse_bid`` or ``parse_card`` has checked it
against the exact legal list the bot was sent. The documented fallback for a faulty answer is
deterministic and deliberately weak, so a fault never pays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from arena.faults import BotIllegalActionError, BotWrongShapeError, make_sample
from arena.wire import PartlyEncoded, SharedText, encode_json
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
    message = _envelope(match_id, time_limit_ms)
    message["type"] = kind
    message["legal"] = list(legal)
    message.update(observation)
    return message


def _envelope(match_id: str, time_limit_ms: int) -> dict[str, Any]:
    """The fields of a decision request besides its type, ``legal`` and the observation."""
    return {"protocol": PROTOCOL, "match_id": match_id, "time_limit_ms": time_limit_ms}


class DecisionRequests:
    """Build one match's ``bid`` and ``play`` requests, keeping the shared parts encoded.

    Each request holds what ``decision_message`` of the seat's whole observation holds. What
    does not change from one request to the next travels as JSON text (``PartlyEncoded``): the
    envelope (protocol, match id, time limit), encoded once per time limit, and the parts every
    seat shares (``engine.observation.SHARED_KEYS``), re-encoded only when the engine says they
    changed. The type stays a value, for seats that only look at it.
    """

    __slots__ = ("_envelopes", "_game", "_match_id", "_shared")

    def __init__(self, game: Game, match_id: str) -> None:
        self._game = game
        self._match_id = match_id
        self._shared = SharedText(game)
        self._envelopes: dict[int, str] = {}

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
        fields = observe(self._game, seat, shared=False)
        if to_act is not None:
            fields["to_act"] = to_act
        fields["type"] = kind
        fields["legal"] = list(legal)
        return PartlyEncoded(fields, (self._envelope(time_limit_ms), self._shared.members()))

    def _envelope(self, time_limit_ms: int) -> str:
        """The envelope as JSON object members."""
        envelope = self._envelopes.get(time_limit_ms)
        if envelope is None:
            text = encode_json(_envelope(self._match_id, time_limit_ms))
            envelope = self._envelopes[time_limit_ms] = text[1:-1]
        return envelope


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
