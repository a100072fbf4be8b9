"""Write the JSON Schema of every ``ohhell/1`` message into ``arena/schemas/``.

The schemas are committed; a test regenerates them and fails if they drift from the code.
Run ``python -m arena.schemagen`` after changing a message or a variant option.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.protocol import MessageType
from engine.game import Phase
from engine.variant import OPTIONS

SCHEMA_DIR = Path(__file__).with_name("schemas")
BASE_ID = "https://ohhell.example/schemas/ohhell-1/"
CARD = {"type": "string", "pattern": "^[23456789TJQKA][CDHS]$"}
SEAT = {"type": "integer", "minimum": 0, "maximum": 7}
PER_SEAT = {"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 8}
COMMON = {"protocol": {"const": "ohhell/1"}, "match_id": {"type": "string", "maxLength": 64}}


def _variant() -> dict[str, Any]:
    props: dict[str, Any] = {}
    for name, spec in OPTIONS.items():
        default = spec["default"]
        if isinstance(default, bool):
            prop: dict[str, Any] = {"type": "boolean"}
        elif name in ("deals", "target_score"):
            prop = {"type": ["integer", "null"], "minimum": 1}
        elif name == "max_cards":
            words = [v for v in spec["values"] if not v.startswith("integer")]
            prop = {"oneOf": [{"enum": words}, {"type": "integer", "minimum": 1}]}
        elif isinstance(default, int):
            prop = {"type": "integer"}
        else:
            prop = {"enum": list(spec["values"])}
        props[name] = {**prop, "description": spec["help"]}
    return {
        "type": "object",
        "description": "the full variant, as the engine's Variant.to_dict()",
        "required": ["schema", "name", *OPTIONS],
        "additionalProperties": False,
        "properties": {"schema": {"const": 1}, "name": {"type": "string"}, **props},
    }


def _observation() -> dict[str, Any]:
    done = {
        "type": "object",
        "required": ["leader", "cards", "winner"],
        "additionalProperties": False,
        "properties": {"leader": SEAT, "cards": {"type": "array", "items": CARD}, "winner": SEAT},
    }
    now = {
        "type": ["object", "null"],
        "required": ["leader", "cards"],
        "additionalProperties": False,
        "properties": {"leader": SEAT, "cards": {"type": "array", "items": CARD}},
    }
    past = {
        "type": "object",
        "required": ["bids", "tricks_won", "scores"],
        "additionalProperties": False,
        "properties": {"bids": PER_SEAT, "tricks_won": PER_SEAT, "scores": PER_SEAT},
    }
    bids = {"type": "array", "items": {"type": ["integer", "null"], "minimum": 0}}
    return {
        "variant": _variant(),
        "players": {"type": "integer", "minimum": 3, "maximum": 8},
        "seat": {**SEAT, "description": "your seat; seats are numbered clockwise from 0"},
        "phase": {"enum": [Phase.BID, Phase.PLAY]},
        "to_act": {**SEAT, "description": "the seat to act: you (closed bidding: all at once)"},
        "deal": {"type": "integer", "minimum": 1, "description": "the deal number, from 1"},
        "deals": {
            "type": ["integer", "null"],
            "description": "deals in the game; null under a target score",
        },
        "schedule": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1},
            "description": "hand size of every deal that may be played",
        },
        "dealer": SEAT,
        "eldest": {**SEAT, "description": "the seat left of the dealer: bids first, leads first"},
        "hand_size": {"type": "integer", "minimum": 1, "maximum": 17},
        "hand": {"type": "array", "items": CARD, "description": "your cards now"},
        "trump": {"enum": ["C", "D", "H", "S", None], "description": "trump suit, or null"},
        "trump_card": {
            "oneOf": [CARD, {"type": "null"}],
            "description": "the card turned to fix trump, or null",
        },
        "trump_card_holder": {
            "type": ["integer", "null"],
            "minimum": 0,
            "maximum": 7,
            "description": "the dealer, who holds the turned card "
            "(trump=dealer_last_card), else null",
        },
        "bids": {
            **bids,
            "description": "bids by seat, null where not made; under closed "
            "bidding other bids are null until all are made",
        },
        "over_under": {
            "enum": ["over", "under", "even", None],
            "description": "with announce_over_under, once every bid is made",
        },
        "tricks": {"type": "array", "items": done, "description": "finished tricks of this deal"},
        "trick": {**now, "description": "the trick in progress, or null"},
        "tricks_won": {**PER_SEAT, "description": "tricks won this deal, by seat"},
        "scores": {**PER_SEAT, "description": "running totals, by seat"},
        "history": {"type": "array", "items": past, "description": "finished deals"},
    }


def _decision(kind: MessageType, legal: dict[str, Any]) -> dict[str, Any]:
    props = {
        **COMMON,
        "type": {"const": kind},
        "time_limit_ms": {
            "type": "integer",
            "minimum": 1,
            "description": "answer within this (bids get twice a play's time)",
        },
        "time_bank_ms": {
            "type": "integer",
            "minimum": 0,
            "description": "your time bank left in this match: time over time_limit_ms is "
            "drawn from it before the answer is a timeout (0: none left, or no bank)",
        },
        "legal": {**legal, "minItems": 1, "description": "the exact list of legal answers"},
        **_observation(),
    }
    return {
        "type": "object",
        "required": sorted(props),
        "additionalProperties": False,
        "properties": props,
    }


def _timing() -> dict[str, Any]:
    ms_or_null = {"type": ["number", "null"], "minimum": 0}
    whole_ms = {"type": "integer", "minimum": 0}
    props = {
        "decisions": {**whole_ms, "description": "your bids and plays the arena timed"},
        "median_ms": {**ms_or_null, "description": "their median latency (null: none)"},
        "max_ms": {**ms_or_null, "description": "their longest latency (null: none)"},
        "over_limit": {**whole_ms, "description": "decisions over their time limit"},
        "time_bank_ms": {**whole_ms, "description": "the bank you started the match with"},
        "time_bank_used_ms": {**whole_ms, "description": "the bank your decisions drew"},
        "time_bank_left_ms": {**whole_ms, "description": "the bank left at the end"},
    }
    return {
        "type": "object",
        "required": sorted(props),
        "additionalProperties": False,
        "properties": props,
        "description": "your own latencies and time bank in the match, as the arena measured them",
    }


def schemas() -> dict[str, dict[str, Any]]:
    """Return every message schema by file name."""
    result = {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "protocol",
            "type",
            "match_id",
            "seat",
            "players",
            "totals",
            "ranks",
            "disqualified",
            "faults",
            "timing",
        ],
        "properties": {
            **COMMON,
            "type": {"const": MessageType.RESULT},
            "seat": SEAT,
            "players": {"type": "integer", "minimum": 3, "maximum": 8},
            "totals": {**PER_SEAT, "description": "final totals by seat"},
            "ranks": {**PER_SEAT, "description": "final ranks (1 best; equal totals share)"},
            "disqualified": {"type": "array", "items": {"type": "boolean"}},
            "faults": {"type": "integer", "minimum": 0, "description": "your faults in it"},
            "timing": _timing(),
        },
    }
    hello = {
        "type": "object",
        "required": ["protocol", "type"],
        "additionalProperties": False,
        "properties": {
            **COMMON,
            "type": {"const": MessageType.HELLO},
            "arena": {"type": "string"},
            "match_id": {"type": ["string", "null"]},
            "time_limit_ms": {"type": "integer", "minimum": 1},
        },
    }
    docs: dict[str, tuple[str, dict[str, Any]]] = {
        "hello.request": ("A check at registration, on demand and by health checks.", hello),
        "hello.response": (
            "Any JSON object passes; name and version are shown if given.",
            {
                "type": "object",
                "properties": {"name": {"type": "string"}, "version": {"type": "string"}},
            },
        ),
        "bid.request": (
            "Everything the seat may know, plus the exact legal bids.",
            _decision(MessageType.BID, {"type": "array", "items": {"type": "integer"}}),
        ),
        "bid.response": (
            "One of the integers in legal.",
            {
                "type": "object",
                "required": ["bid"],
                "properties": {"bid": {"type": "integer", "minimum": 0}},
            },
        ),
        "play.request": (
            "Everything the seat may know, plus the exact legal cards.",
            _decision(MessageType.PLAY, {"type": "array", "items": CARD}),
        ),
        "play.response": (
            "One of the card strings in legal.",
            {"type": "object", "required": ["card"], "properties": {"card": CARD}},
        ),
        "result.request": ("The end of a match, for the bot's information.", result),
        "result.response": ("Ignored: any 2xx answer will do.", {}),
    }
    return {
        f"{name}.json": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": BASE_ID + f"{name}.json",
            "title": f"ohhell/1 {name.replace('.', ' ')}",
            "description": description,
            **body,
        }
        for name, (description, body) in docs.items()
    }


def render(schema: dict[str, Any]) -> str:
    """Return the committed text of one schema."""
    return json.dumps(schema, indent=2) + "\n"


def main() -> None:
    """Write every schema file."""
    SCHEMA_DIR.mkdir(exist_ok=True)
    for name, schema in schemas().items():
        (SCHEMA_DIR / name).write_text(render(schema))


if __name__ == "__main__":
    main()
