"""The nine named presets of docs/rules.md section 2: named values, not subclasses."""

from __future__ import annotations

from typing import Any

from engine.errors import InvalidVariantError
from engine.variant import Variant

_COMMON = {"made": "10+bid", "made_zero": "10", "missed_over": "taken", "missed_under": "taken"}
_ZERO_ON_MISS = {"missed_over": "zero", "missed_under": "zero"}

_PRESET_OPTIONS: dict[str, dict[str, Any]] = {
    "oh-hell": {**_COMMON, "first_dealer": "draw", "hook": True},
    "blackout": {**_COMMON, **_ZERO_ON_MISS, "first_dealer": "draw", "hook": True},
    "oh-well": {
        **_COMMON,
        "removed_cards": "even",
        "max_cards": "max_possible",
        "order": "constant",
        "first_dealer": "random",
        "trump": "dealer_last_card",
        "hook": False,
        "target_score": 100,
    },
    "nomination-whist": {
        **_COMMON,
        "max_cards": "seven",
        "first_dealer": "first_jack",
        "hook": True,
    },
    "up-and-down-the-river": {
        **_COMMON,
        "min_players": 4,
        "max_players": 8,
        "max_cards": "max_leaving_trump",
        "first_dealer": "random",
        "hook": True,
    },
    "oh-pshaw": {
        **_COMMON,
        **_ZERO_ON_MISS,
        "max_cards": "max_possible",
        "order": "up",
        "deals": 15,
        "first_dealer": "random",
        "hook": False,
        "announce_over_under": True,
    },
    "british-oh-hell": {
        "made": "bonus_only",
        "made_zero": "10",
        **_ZERO_ON_MISS,
        "max_cards": "max_possible",
        "order": "up",
        "first_dealer": "random",
        "hook": False,
    },
    "ascending-blackout": {
        **_COMMON,
        **_ZERO_ON_MISS,
        "max_cards": "max_possible",
        "order": "up",
        "deals": 15,
        "first_dealer": "random",
        "last_deal_no_trump": True,
        "hook": False,
    },
    "la-podrida": {**_COMMON, "first_dealer": "draw", "hook": True, "must_trump": True},
}

PRESETS: dict[str, Variant] = {
    name: Variant(name=name, **options) for name, options in _PRESET_OPTIONS.items()
}

# The options each preset's rules text offers as a documented alternative.
PRESET_NOTES: dict[str, str] = {
    "oh-hell": "McLeod's Oh Hell with common scoring (pagat; cardgames.io defaults).",
    "blackout": "McLeod's simple scoring: a missed bid scores nothing (Blackout, Blob).",
    "oh-well": "Oh! Well, the British original: the whole pack every deal, first to 100.",
    "nomination-whist": "Nomination / Contract Whist: 7 down to 1 and back up to 7.",
    "up-and-down-the-river": "The Australian and New Zealand version, for 4 to 8 players.",
    "oh-pshaw": "Bicycle's Oh Pshaw; winner_bonus 10 gives its optional hard score.",
    "british-oh-hell": "Parlett's British Oh Hell; bidding=closed gives simultaneous bidding.",
    "ascending-blackout": "One more card each deal, the last deal without trump; hook optional.",
    "la-podrida": "The Spanish version: Oh Hell plus the must-trump rule.",
}


def preset(name: str, **overrides: Any) -> Variant:
    """Return a named preset, optionally with some options changed."""
    try:
        base = PRESETS[name]
    except (KeyError, TypeError):
        raise InvalidVariantError(
            "preset", f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}"
        ) from None
    return base.with_options(**overrides) if overrides else base
