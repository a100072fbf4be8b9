"""Randomness of a game: choosing the first dealer and shuffling, all from one seeded RNG.

Only ``random.Random(seed)`` is used, with integer draws made here, so the same seed gives
the same deals on every platform and Python version.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engine.cards import DECK_SIZE, JACK
from engine.errors import InvalidSeedError
from engine.variant import FirstDealer

MAX_SEED = 2**63 - 1
_PACK = tuple(range(DECK_SIZE))
# Position, number of cards left to pick from, and bits to draw, for each shuffle step; the
# last position needs no step.
_SHUFFLE_STEPS = tuple(
    (i, DECK_SIZE - i, (DECK_SIZE - i).bit_length()) for i in range(DECK_SIZE - 1)
)


def check_seed(seed: int) -> None:
    """Refuse seeds that are not plain ints in 0..MAX_SEED."""
    if type(seed) is not int or not 0 <= seed <= MAX_SEED:
        raise InvalidSeedError(f"seed must be an integer 0..2**63-1, not {seed!r}")


def new_rng(seed: int) -> random.Random:
    """Return the game's private RNG; refuse seeds that are not plain non-negative ints."""
    check_seed(seed)
    return random.Random(seed)


def draw_index(rng: random.Random, bound: int) -> int:
    """Uniform integer in 0..bound-1 by rejection on getrandbits (stable across versions)."""
    bits = bound.bit_length()
    r = rng.getrandbits(bits)
    while r >= bound:
        r = rng.getrandbits(bits)
    return r


def shuffled_prefix(rng: random.Random, count: int, pack: tuple[int, ...] = _PACK) -> list[int]:
    """Return the pack with its first ``count`` positions shuffled (Fisher-Yates, partial).

    The rest of the pack is never looked at, so shuffling it would only cost time. ``pack``
    may stand for the cards 0..51 in another form (their bits, say): the swaps depend only
    on the draws, so card ``c`` ends where it would as an index.
    """
    deck = list(pack)
    getbits = rng.getrandbits
    for i, bound, bits in _SHUFFLE_STEPS[:count]:
        r = getbits(bits)
        while r >= bound:
            r = getbits(bits)
        j = i + r
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def first_dealer(rng: random.Random, method: FirstDealer, players: int) -> int:
    """Choose the first dealer as the variant says; the cards used go back into the pack."""
    return _FIRST_DEALER[method](rng, players)


def _highest_card_deals(rng: random.Random, players: int) -> int:
    contenders = list(range(players))
    while True:
        deck = shuffled_prefix(rng, len(contenders))
        ranks = [deck[i] % 13 for i in range(len(contenders))]
        best = max(ranks)
        contenders = [seat for seat, rank in zip(contenders, ranks, strict=True) if rank == best]
        if len(contenders) == 1:
            return contenders[0]


def _first_jack_deals(rng: random.Random, players: int) -> int:
    start = draw_index(rng, players)
    deck = shuffled_prefix(rng, DECK_SIZE)
    for i, card in enumerate(deck):
        if card % 13 == JACK:
            return (start + i) % players
    raise AssertionError("a full pack holds four jacks")


_FIRST_DEALER: dict[FirstDealer, Callable[[random.Random, int], int]] = {
    FirstDealer.RANDOM: draw_index,
    FirstDealer.DRAW: _highest_card_deals,
    FirstDealer.FIRST_JACK: _first_jack_deals,
}
