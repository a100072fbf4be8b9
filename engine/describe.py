"""Plain-words rules of a variant, generated from its options (dashboard, CLI, API)."""

from __future__ import annotations

from engine.variant import (
    DEFAULT_MAX,
    Bidding,
    FirstDealer,
    Made,
    MaxCards,
    Missed,
    Order,
    RemovedCards,
    Trump,
    Variant,
)

_ORDER_WORDS: dict[Order, str] = {
    Order.DOWN_UP: "from the largest hand down to 1 card and back up",
    Order.UP_DOWN: "from 1 card up to the largest hand and back down",
    Order.UP: "from 1 card up, one more each deal",
    Order.DOWN: "from the largest hand down to 1 card",
    Order.CONSTANT: "the same hand size every deal",
}
_DEALER_WORDS: dict[FirstDealer, str] = {
    FirstDealer.RANDOM: "The first dealer is chosen at random.",
    FirstDealer.DRAW: "Each player draws a card; the highest deals first (ties draw again).",
    FirstDealer.FIRST_JACK: (
        "Cards are dealt face up round the table; the first to receive a Jack deals."
    ),
}
_MADE_WORDS: dict[Made, str] = {
    Made.TEN_PLUS_BID: "10 plus the bid",
    Made.TEN_TIMES_BID: "10 times the bid",
    Made.TEN_PLUS_BID_SQUARED: "10 plus the bid squared",
    Made.TEN_PLUS_TWO_BID: "10 plus twice the bid",
    Made.FIVE_PLUS_BID: "5 plus the bid",
    Made.BONUS_ONLY: "10 whatever the bid",
}
_MISSED_WORDS: dict[Missed, str] = {
    Missed.TAKEN: "one point per trick taken",
    Missed.ZERO: "nothing",
    Missed.MINUS_DIFF: "minus the difference",
    Missed.MINUS_DIFF_SQUARED: "minus the difference squared",
}


def _hands(v: Variant) -> str:
    sizes = []
    for n in range(v.min_players, v.max_players + 1):
        sched = v.schedule(n)
        count = "until the target" if v.target_score else f"{len(sched)} deals"
        sizes.append(f"{n} players: {v.largest_hand(n)} cards at most, {count}")
    mc = v.max_cards
    if mc is MaxCards.DEFAULT:
        top = ", ".join(
            f"{DEFAULT_MAX[n]} for {n}" for n in range(v.min_players, v.max_players + 1)
        )
        head = f"Largest hand: {top} players."
    elif mc is MaxCards.MAX_POSSIBLE:
        head = "Largest hand: as many cards as the pack allows."
    elif mc is MaxCards.MAX_LEAVING_TRUMP:
        head = "Largest hand: up to 10 cards, fewer when the pack could not leave a card to turn."
    elif mc is MaxCards.SEVEN:
        head = "Largest hand: 7 cards."
    else:
        head = f"Largest hand: {mc} cards."
    return f"{head} Hand sizes run {_ORDER_WORDS[v.order]} ({'; '.join(sizes)})."


def _trump(v: Variant) -> str:
    if v.trump is Trump.TURN_UP:
        text = "After the deal the next card of the stock is turned; its suit is trump (no trump"
        text += " when no card is left)."
    elif v.trump is Trump.DEALER_LAST_CARD:
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
    if v.removed_cards is RemovedCards.EVEN:
        lines.append("Cards are removed from the bottom of the pack so that it divides evenly.")
    lines.append(_hands(v))
    lines.append(_DEALER_WORDS[v.first_dealer])
    lines.append(_trump(v))
    if v.bidding is Bidding.CLOSED:
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
