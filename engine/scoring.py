"""Deal scores (docs/rules.md 3.7), final standings (3.8) and the ranks a match gives ratings."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.variant import Made, MadeZero, Missed, Variant

# Every member of each rule has its entry, so a rule without one fails at the look-up.
_MADE: dict[Made, Callable[[int], int]] = {
    Made.TEN_PLUS_BID: lambda bid: 10 + bid,
    Made.TEN_TIMES_BID: lambda bid: 10 * bid,
    Made.TEN_PLUS_BID_SQUARED: lambda bid: 10 + bid * bid,
    Made.TEN_PLUS_TWO_BID: lambda bid: 10 + 2 * bid,
    Made.FIVE_PLUS_BID: lambda bid: 5 + bid,
    Made.BONUS_ONLY: lambda bid: 10,
}
_MADE_ZERO: dict[MadeZero, Callable[[int], int]] = {
    MadeZero.TEN: lambda cards: 10,
    MadeZero.FIVE: lambda cards: 5,
    MadeZero.FIVE_PLUS_CARDS: lambda cards: 5 + cards,
    MadeZero.TEN_PLUS_CARDS: lambda cards: 10 + cards,
}
_MISSED: dict[Missed, Callable[[int, int], int]] = {
    Missed.TAKEN: lambda diff, taken: taken,
    Missed.ZERO: lambda diff, taken: 0,
    Missed.MINUS_DIFF: lambda diff, taken: -diff,
    Missed.MINUS_DIFF_SQUARED: lambda diff, taken: -diff * diff,
}


def made_score(rule: Made, bid: int) -> int:
    """Score an exact bid above zero."""
    return _MADE[rule](bid)


def made_zero_score(rule: MadeZero, cards: int) -> int:
    """Score an exact bid of zero in a deal of ``cards`` tricks."""
    return _MADE_ZERO[rule](cards)


def missed_score(rule: Missed, bid: int, taken: int) -> int:
    """Score a missed bid."""
    return _MISSED[rule](abs(taken - bid), taken)


def deal_score(variant: Variant, bid: int, taken: int, tricks: int) -> int:
    """Score one seat's deal: ``bid`` made or missed with ``taken`` of ``tricks``."""
    if taken == bid:
        score = (
            made_zero_score(variant.made_zero, tricks)
            if bid == 0
            else made_score(variant.made, bid)
        )
        if variant.double_when_all and bid == tricks:
            score *= 2
        return score
    rule = variant.missed_over if taken > bid else variant.missed_under
    return missed_score(rule, bid, taken)


def shared_ranks(totals: Sequence[float]) -> list[int]:
    """Rank totals highest first; equal totals share a rank (1, 2, 2, 4)."""
    return [1 + sum(1 for other in totals if other > mine) for mine in totals]


def rating_ranks(totals: Sequence[int], disqualified: Sequence[bool]) -> list[int]:
    """Rank seats for ratings: by total among those still in, then every disqualified seat."""
    kept = [s for s in range(len(totals)) if not disqualified[s]]
    kept_ranks = shared_ranks([totals[s] for s in kept])
    ranks = [len(kept) + 1] * len(totals)
    for s, r in zip(kept, kept_ranks, strict=True):
        ranks[s] = r
    return ranks


def winners(totals: Sequence[int]) -> list[int]:
    """Seats with the highest total (several when tied)."""
    best = max(totals)
    return [seat for seat, total in enumerate(totals) if total == best]
