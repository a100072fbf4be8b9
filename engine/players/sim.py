"""A lean single-deal simulator for search: dealing the unseen cards and playing a deal out.

It never touches a ``Game``: positions are built from a seat's View, so a search player
sees exactly what its observation shows.
"""

from __future__ import annotations

import random

from engine.cards import FULL_DECK, SUIT_MASKS, card_indices
from engine.players.policy import choose_card, legal_mask, winning_card
from engine.players.view import View

_SAMPLE_TRIES = 20


def sample_hands(view: View, rng: random.Random) -> list[int]:
    """Deal the unseen cards to the other seats, consistent with everything the seat saw.

    Each seat gets as many cards as it still holds, none of a suit it showed it lacks, and,
    under ``dealer_last_card``, the dealer keeps the turned card until it is played.
    """
    n = view.players
    hands = [0] * n
    hands[view.seat] = view.hand
    counts = [view.cards_left(s) for s in range(n)]
    counts[view.seat] = 0
    known = view.hand | view.played
    if view.trump_card >= 0:
        bit = 1 << view.trump_card
        holder = view.trump_holder
        if holder >= 0 and holder != view.seat and not view.played & bit:
            hands[holder] |= bit
            counts[holder] -= 1
        known |= bit
    pool = list(card_indices(FULL_DECK & ~known))
    allowed = [FULL_DECK & ~_suits_mask(view.voids[s]) for s in range(n)]
    seats = sorted(
        (s for s in range(n) if counts[s] > 0),
        key=lambda s: (allowed[s] & ~known).bit_count() - counts[s],
    )
    for _ in range(_SAMPLE_TRIES):
        dealt = _deal_greedily(pool, seats, counts, allowed, hands, rng)
        if dealt is not None:
            return dealt
    # Voids that cannot all be honoured (never expected) fall back to a plain deal.
    return _deal_greedily(pool, seats, counts, [FULL_DECK] * n, hands, rng) or hands


def _suits_mask(voids: int) -> int:
    mask = 0
    for suit in range(4):
        if voids >> suit & 1:
            mask |= SUIT_MASKS[suit]
    return mask


def _deal_greedily(
    pool: list[int],
    seats: list[int],
    counts: list[int],
    allowed: list[int],
    hands: list[int],
    rng: random.Random,
) -> list[int] | None:
    """Shuffle the pool and let each seat, most constrained first, take what it may hold."""
    rng.shuffle(pool)
    out = list(hands)
    taken = 0
    for seat in seats:
        want, got, mask, allow = counts[seat], 0, 0, allowed[seat]
        for card in pool:
            bit = 1 << card
            if bit & allow and not bit & taken:
                mask |= bit
                got += 1
                if got == want:
                    break
        if got < want:
            return None
        taken |= mask
        out[seat] |= mask
    return out


def rollout(
    hands: list[int],
    trick: list[int],
    leader: int,
    view: View,
    bids: list[int],
    won: list[int],
) -> list[int]:
    """Play the deal to its end with the heuristic for every seat; return tricks won."""
    n, trump, must_trump = view.players, view.trump, view.must_trump
    hands, trick, won = list(hands), list(trick), list(won)
    gone = view.gone
    for card in trick:
        gone |= 1 << card
    remaining = sum(h.bit_count() for h in hands)
    while True:
        if len(trick) == n:
            best = winning_card(trick, trump)
            leader = (leader + trick.index(best)) % n
            won[leader] += 1
            trick = []
        if not remaining:
            return won
        seat = (leader + len(trick)) % n
        hand = hands[seat]
        legal = legal_mask(hand, trick, trump, must_trump)
        card = choose_card(hand, legal, trick, trump, gone, bids[seat] - won[seat], n)
        hands[seat] = hand ^ 1 << card
        gone |= 1 << card
        trick.append(card)
        remaining -= 1
