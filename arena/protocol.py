"""The ``ohhell/1`` messages: building requests from observations, parsing answers strictly.

Nothing a bot answers reaches the engine before ``parse_bid`` or ``parse_card`` has checked it
against the exact legal list the bot was sent. The documented fallback for a faulty answer is
deterministic and deliberately weak, so a fault never pays.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from arena.faults import BotIllegalActionError, BotWrongShapeError, make_sample
from engine.cards import CARD_INDEX

PROTOCOL = "ohhell/1"


class MessageType(StrEnum):
    """The ``type`` of a request; ``hello`` is built by ``arena.transport``."""

    HELLO = "hello"
    BID = "bid"
    PLAY = "play"
    RESULT = "result"


MESSAGE_TYPES = tuple(MessageType)


def decision_message(
    kind: MessageType,
    observation: dict[str, Any],
    legal: Sequence[int] | Sequence[str],
    *,
    match_id: str,
    time_limit_ms: int,
    time_bank_ms: int,
) -> dict[str, Any]:
    """Return a ``bid`` or ``play`` request: the seat's observation plus ``legal``, with its
    time limit and the seat's time bank left (``arena.timebank``)."""
    return {
        "protocol": PROTOCOL,
        "match_id": match_id,
        "time_limit_ms": time_limit_ms,
        "time_bank_ms": time_bank_ms,
        "type": kind,
        "legal": list(legal),
        **observation,
    }


def result_message(
    *,
    match_id: str,
    seat: int,
    totals: Sequence[int],
    ranks: Sequence[int],
    disqualified: Sequence[bool],
    faults: int,
    timing: dict[str, Any],
) -> dict[str, Any]:
    """Return the ``result`` message sent to each seat when a match ends, with the seat's own
    latencies and time bank as the arena measured them (``TimeBank.summary``)."""
    return {
        "protocol": PROTOCOL,
        "type": MessageType.RESULT,
        "match_id": match_id,
        "seat": seat,
        "players": len(totals),
        "totals": list(totals),
        "ranks": list(ranks),
        "disqualified": list(disqualified),
        "faults": faults,
        "timing": timing,
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
    # The answer as JSON, the way the bot wrote it, not as Python would print it.
    return make_sample(json.dumps(answer, ensure_ascii=False))
