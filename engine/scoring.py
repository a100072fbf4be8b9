"""Deal scores (rules.md 3.7) and final standings (3.8)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.variant import Variant


def made_score(rule: str, bid: int) -> int:
    """Score an exact bid above zero."""
    if rule == "10+bid":
        return 10 + bid
    if rule == "10*bid":
        return 10 * bid
    if rule == "10+bid^2":
        return 10 + bid * bid
    if rule == "10+2*bid":
        return 10 + 2 * bid
    if rule == "5+bid":
        return 5 + bid
    return 10  # bonus_only


def made_zero_score(rule: str, cards: int) -> int:
    """Score an exact bid of zero in a deal of ``cards`` tricks."""
    return {"10": 10, "5": 5, "5+cards": 5 + cards, "10+cards": 10 + cards}[rule]


def missed_score(rule: str, bid: int, taken: int) -> int:
    """Score a missed bid."""
    diff = abs(taken - bid)
    if rule == "taken":
        return taken
    if rule == "zero":
        return 0
    if rule == "minus_diff":
        return -diff
    return -diff * diff  # minus_diff_squared


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


def shared_ranks(totals: Sequence[int]) -> list[int]:
    """Rank totals highest first; equal totals share a rank (1, 2, 2, 4)."""
    return [1 + sum(1 for other in totals if other > mine) for mine in totals]


def winners(totals: Sequence[int]) -> list[int]:
    """Seats with the highest total (several when tied)."""
    best = max(totals)
    return [seat for seat, total in enumerate(totals) if total == best]
