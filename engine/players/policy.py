"""The heuristic policy on bit masks: shared by the heuristic player and the search rollouts.

Cards are ints (``suit * 13 + rank``) and hands are masks, as in ``engine.cards``. Every
function here sees only what one seat may know, so a player built on it cannot cheat.
"""

from __future__ import annotations

from engine.cards import SUIT_MASKS, card_indices

_LOW_BITS = tuple((1 << (c + 1)) - 1 for c in range(52))


def popcount(mask: int) -> int:
    """Count the cards of a mask."""
    return mask.bit_count()


def beats(card: int, best: int, trump: int) -> bool:
    """Tell whether ``card`` beats ``best``, the card now winning the trick."""
    suit = card // 13
    if suit == best // 13:
        return card > best
    return suit == trump


def winning_card(trick: list[int], trump: int) -> int:
    """The card now winning a trick in progress."""
    best = trick[0]
    for card in trick[1:]:
        if beats(card, best, trump):
            best = card
    return best


def legal_mask(hand: int, trick: list[int], trump: int, must_trump: bool) -> int:
    """Cards a hand may play to a trick (follow suit; trump when void under must-trump)."""
    if not trick:
        return hand
    follow = hand & SUIT_MASKS[trick[0] // 13]
    if follow:
        return follow
    if must_trump and trump >= 0:
        trumps = hand & SUIT_MASKS[trump]
        if trumps:
            return trumps
    return hand


def value(card: int, trump: int) -> int:
    """Order cards by how likely they are to win: rank, with trumps above every plain card."""
    return card % 13 + (13 if card // 13 == trump else 0)


def is_master(card: int, hand: int, gone: int) -> bool:
    """Tell whether no card above ``card`` in its suit can still be held by another seat."""
    higher = SUIT_MASKS[card // 13] & ~_LOW_BITS[card]
    return not higher & ~(hand | gone)


# -- bidding ---------------------------------------------------------------------------------


def estimate_tricks(hand: int, trump: int, players: int, seen: int = 0) -> float:
    """Expected tricks of a hand: each card's chance to win, from rank, length and trumps.

    ``seen`` holds cards known to be out of the other hands (such as the turned card).
    """
    size = popcount(hand)
    unseen = 52 - size - popcount(seen)
    # Chance that a given unseen card sits in an opponent's hand rather than the stock.
    q = min(1.0, (players - 1) * size / max(1, unseen))
    trumps = popcount(hand & SUIT_MASKS[trump]) if trump >= 0 else 0
    total = 0.0
    for suit in range(4):
        cards = card_indices(hand & SUIT_MASKS[suit])
        if not cards:
            if suit != trump and trumps:
                total += 0.35 * min(trumps, 2) * q
            continue
        for depth, card in enumerate(cards):
            higher = SUIT_MASKS[suit] & ~_LOW_BITS[card] & ~hand & ~seen
            p = (1.0 - q) ** popcount(higher)
            if suit == trump:
                if depth >= 2:
                    p = max(p, 0.25 + 0.15 * (depth - 1))
            elif trump >= 0:
                # Plain cards get ruffed more as the suit goes round and as players grow.
                p *= 0.92 ** (players - 2) * 0.6 ** (depth + max(0, len(cards) - 3))
            else:
                p *= 0.85**depth
            total += min(p, 1.0)
    # Fitted on heuristic self-play: the per-card chances miss tricks won by low cards in
    # long hands and overrate lone plain cards in short ones.
    return min(float(size), max(0.0, total + 0.62 * size / players - 0.54))


def choose_bid(estimate: float, legal: tuple[int, ...]) -> int:
    """The legal bid nearest the estimate (the hook may forbid the nearest)."""
    return min(legal, key=lambda b: (abs(b - estimate), b))


# -- play ------------------------------------------------------------------------------------


def choose_card(
    hand: int, legal: int, trick: list[int], trump: int, gone: int, need: int, players: int
) -> int:
    """Play to make the bid exactly: win cheaply while tricks are needed, else duck.

    ``gone`` holds every card known to be out of the other hands (played, or seen in the
    stock); ``need`` is the bid minus the tricks won so far.
    """
    cards = card_indices(legal)
    if len(cards) == 1:
        return cards[0]
    if not trick:
        return _lead(cards, hand, trump, gone, need)
    best = winning_card(trick, trump)
    wins = [c for c in cards if beats(c, best, trump)]
    loses = [c for c in cards if not beats(c, best, trump)]
    last = len(trick) == players - 1
    if need > 0:
        if not wins:
            return min(loses, key=lambda c: value(c, trump))
        if last:
            return min(wins, key=lambda c: value(c, trump))
        masters = [c for c in wins if is_master(c, hand, gone)]
        pool = masters or wins
        return (min if masters else max)(pool, key=lambda c: value(c, trump))
    if loses:
        return max(loses, key=lambda c: value(c, trump))
    # Every card wins: shed the most dangerous one if nobody can still overtake it.
    return (max if last else min)(wins, key=lambda c: value(c, trump))


def _lead(cards: tuple[int, ...], hand: int, trump: int, gone: int, need: int) -> int:
    """Lead a winner while tricks are needed, else the card most likely to lose."""
    if need > 0:
        masters = [c for c in cards if is_master(c, hand, gone)]
        trump_masters = [c for c in masters if c // 13 == trump]
        if trump_masters:
            return max(trump_masters)
        if masters:
            return max(masters, key=lambda c: c % 13)
        plain = [c for c in cards if c // 13 != trump]
        if plain:
            high = max(plain, key=lambda c: c % 13)
            if high % 13 >= 10:
                return high
            return min(plain, key=lambda c: c % 13)
        return max(cards)
    return min(cards, key=lambda c: (_higher_out(c, hand, gone) == 0, value(c, trump)))


def _higher_out(card: int, hand: int, gone: int) -> int:
    """Cards above ``card`` in its suit that another seat may still hold."""
    return popcount(SUIT_MASKS[card // 13] & ~_LOW_BITS[card] & ~(hand | gone))
