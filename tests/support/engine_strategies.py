"""Hypothesis strategies: random valid variants built from the option table."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from engine import OPTIONS, InvalidVariantError, Variant

# Each option drawn from its documented values; numbers kept small so games stay quick.
_NUMBERS: dict[str, st.SearchStrategy[Any]] = {
    "min_players": st.integers(3, 8),
    "max_players": st.integers(3, 8),
    "max_cards": st.integers(1, 17),
    "deals": st.none() | st.integers(1, 20),
    "winner_bonus": st.sampled_from([0, 10]),
    "target_score": st.none() | st.integers(1, 150),
    "max_deals": st.integers(1, 25),
}


def _option(name: str) -> st.SearchStrategy[Any]:
    values = OPTIONS[name]["values"]
    if name == "max_cards":
        return st.sampled_from([v for v in values if not v.startswith("integer")]) | _NUMBERS[name]
    if name in _NUMBERS:
        return _NUMBERS[name]
    if values == "boolean":
        return st.booleans()
    return st.sampled_from(list(values))


def _build(options: dict[str, Any]) -> Variant | None:
    try:
        return Variant(**options)
    except InvalidVariantError:
        return None


@st.composite
def _options(draw: st.DrawFn) -> dict[str, Any]:
    options = {name: draw(_option(name)) for name in OPTIONS}
    # Keep most draws valid: the hook needs open bidding, a small range fits more hand sizes.
    if options["bidding"] == "closed":
        options["hook"] = False
    low = options["min_players"]
    options["max_players"] = max(low, min(options["max_players"], low + 2))
    return options


def variants() -> st.SearchStrategy[Variant]:
    """Random valid variants over every option."""
    return _options().map(_build).filter(lambda v: v is not None)  # type: ignore[return-value]


@st.composite
def variant_and_players(draw: st.DrawFn) -> tuple[Variant, int]:
    """A random valid variant and a player count it allows."""
    variant = draw(variants())
    return variant, draw(st.integers(variant.min_players, variant.max_players))
