"""Plain-words rules of a variant, generated from its options (dashboard, CLI, API)."""

from __future__ import annotations

from engine.variant import DEFAULT_MAX, Variant

_ORDER_WORDS = {
    "down_up": "from the largest hand down to 1 card and back up",
    "up_down": "from 1 card up to the largest hand and back down",
    "up": "from 1 card up, one more each deal",
    "down": "from the largest hand down to 1 card",
    "constant": "the same hand size every deal",
}
_DEALER_WORDS = {
    "random": "The first dealer is chosen at random.",
    "draw": "Each player draws a card; the highest deals first (ties draw again).",
    "first_jack": "Cards are dealt face up round the table; the first to receive a Jack deals.",
}
_MADE_WORDS = {
    "10+bid": "10 plus the bid",
    "10*bid": "10 times the bid",
    "10+bid^2": "10 plus the bid squared",
    "10+2*bid": "10 plus twice the bid",
    "5+bid": "5 plus the bid",
    "bonus_only": "10 whatever the bid",
}
_MISSED_WORDS = {
    "taken": "one point per trick taken",
    "zero": "nothing",
    "minus_diff": "minus the difference",
    "minus_diff_squared": "minus the difference squared",
}


def _hands(v: Variant) -> str:
    sizes = []
    for n in range(v.min_players, v.max_players + 1):
        sched = v.schedule(n)
        count = "until the target" if v.target_score else f"{len(sched)} deals"
        sizes.append(f"{n} players: {v.largest_hand(n)} cards at most, {count}")
    mc = v.max_cards
    if mc == "default":
        top = ", ".join(
            f"{DEFAULT_MAX[n]} for {n}" for n in range(v.min_players, v.max_players + 1)
        )
        head = f"Largest hand: {top} players."
    elif mc == "max_possible":
        head = "Largest hand: as many cards as the pack allows."
    elif mc == "max_leaving_trump":
        head = "Largest hand: up to 10 cards, fewer when the pack could not leave a card to turn."
    elif mc == "seven":
        head = "Largest hand: 7 cards."
    else:
        head = f"Largest hand: {mc} cards."
    return f"{head} Hand sizes run {_ORDER_WORDS[v.order]} ({'; '.join(sizes)})."


def _trump(v: Variant) -> str:
    if v.trump == "turn_up":
        text = "After the deal the next card of the stock is turned; its suit is trump (no trump"
        text += " when no card is left)."
    elif v.trump == "dealer_last_card":
        text = "The dealer's own last card is turned face up and fixes trump; it stays in the"
        text += " dealer's hand."
    else:
        text = f"Trump follows the cycle {' '.join(v.trump_cycle)} by deal (N: no trump)."
    if v.last_deal_no_trump:
        text += " The last deal is played without trump."
    return text


def _scoring(v: Variant) -> str:
    text = (
        f"An exact bid scores {_MADE_WORDS[v.made]}; an exact bid of zero scores {v.made_zero}"
        f" (cards = tricks in the deal). Too many tricks scores {_MISSED_WORDS[v.missed_over]};"
        f" too few scores {_MISSED_WORDS[v.missed_under]}."
    )
    if v.double_when_all:
        text += " An exact bid of every trick scores double."
    if v.winner_bonus:
        text += f" The winner gets {v.winner_bonus} more points at the end."
    return text


def describe(v: Variant) -> list[str]:
    """Return the rules of ``v`` in plain words, one sentence group per line."""
    lines = [f"{v.min_players} to {v.max_players} players; a standard 52-card pack, aces high."]
    if v.removed_cards == "even":
        lines.append("Cards are removed from the bottom of the pack so that it divides evenly.")
    lines.append(_hands(v))
    lines.append(_DEALER_WORDS[v.first_dealer])
    lines.append(_trump(v))
    if v.bidding == "closed":
        lines.append("Bids are chosen at the same time and revealed together.")
    else:
        lines.append("Each player bids in turn from the dealer's left; bids are public.")
    if v.hook:
        lines.append("Hook: the dealer may not bid so that the bids add up to the tricks.")
    if v.announce_over_under:
        lines.append("After bidding it is announced whether the bids are over, under or even.")
    play = "Players must follow suit if able"
    play += "; a player who cannot must trump if able." if v.must_trump else "."
    lines.append(play)
    lines.append(_scoring(v))
    if v.target_score:
        lines.append(
            f"The game ends after the first deal in which someone reaches {v.target_score}"
            f" points (at most {v.max_deals} deals)."
        )
    else:
        lines.append("The game ends after the last deal of the schedule.")
    lines.append("Equal totals share a rank.")
    return lines
