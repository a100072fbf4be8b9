"""Cards as small integers and hands as bit masks: fast to play, written as ``TD`` outside.

A card is ``suit * 13 + rank`` with suits ``C D H S`` (0..3) and ranks ``2..A`` (0..12), so bit
``card`` of a hand mask says whether the hand holds it.
"""

from __future__ import annotations

SUITS = "CDHS"
RANKS = "23456789TJQKA"
DECK_SIZE = 52
FULL_DECK = (1 << DECK_SIZE) - 1

CARD_NAMES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
CARD_INDEX: dict[str, int] = {name: i for i, name in enumerate(CARD_NAMES)}
CARD_BITS: tuple[int, ...] = tuple(1 << card for card in range(DECK_SIZE))
SUIT_MASKS: tuple[int, ...] = tuple(0x1FFF << (13 * s) for s in range(4))
JACK = RANKS.index("J")

# For each suit, the names of the cards in every 13-bit pattern, highest first. Listing a
# hand is then four table look-ups instead of a loop over 52 bits.
SUIT_NAME_TABLES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(
        tuple(CARD_NAMES[s * 13 + r] for r in range(12, -1, -1) if pattern >> r & 1)
        for pattern in range(1 << 13)
    )
    for s in range(4)
)
_CLUBS, _DIAMONDS, _HEARTS, _SPADES = SUIT_NAME_TABLES
_SUIT_INDEX_TABLES: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        tuple(s * 13 + r for r in range(12, -1, -1) if pattern >> r & 1)
        for pattern in range(1 << 13)
    )
    for s in range(4)
)


def card_names(mask: int) -> tuple[str, ...]:
    """Name the cards of a mask, by suit (C D H S) and highest rank first."""
    return (
        _CLUBS[mask & 0x1FFF]
        + _DIAMONDS[mask >> 13 & 0x1FFF]
        + _HEARTS[mask >> 26 & 0x1FFF]
        + _SPADES[mask >> 39 & 0x1FFF]
    )


def card_indices(mask: int) -> tuple[int, ...]:
    """List the card indices of a mask, by suit and highest rank first."""
    t = _SUIT_INDEX_TABLES
    return (
        t[0][mask & 0x1FFF]
        + t[1][(mask >> 13) & 0x1FFF]
        + t[2][(mask >> 26) & 0x1FFF]
        + t[3][(mask >> 39) & 0x1FFF]
    )


def mask_of(names: list[str] | tuple[str, ...]) -> int:
    """Build a mask from card names; a bad name raises KeyError."""
    mask = 0
    for name in names:
        mask |= 1 << CARD_INDEX[name]
    return mask
