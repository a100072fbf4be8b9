"""A game of Oh Hell: whose turn, the legal actions, applying them, scores and the record.

State is kept lean (hands as bit masks, cards as ints) because simulations and search play
millions of actions; the public API speaks in card names (``TD``) and plain ints.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from engine import errors
from engine.cards import (
    CARD_BITS,
    CARD_INDEX,
    CARD_NAMES,
    SUIT_MASKS,
    SUIT_NAME_TABLES,
    SUITS,
    card_names,
)
from engine.dealing import first_dealer, new_rng, shuffled_prefix
from engine.scoring import deal_score, shared_ranks, winners
from engine.variant import Trump, Variant


class Phase(StrEnum):
    """Where a game stands: bidding, playing cards, or over."""

    BID = "bid"
    PLAY = "play"
    OVER = "over"


# The phase is checked at every action. On Python 3.11 reading a member off an Enum class
# (``Phase.PLAY``) goes through the metaclass's __getattr__ hook and costs about six global
# reads; read that way, a deal took a fifth longer. The methods below read these names instead.
_BID, _PLAY, _OVER = Phase.BID, Phase.PLAY, Phase.OVER
_BID_RANGES = tuple(tuple(range(h + 1)) for h in range(53))
_CLUBS, _DIAMONDS, _HEARTS, _SPADES = SUIT_NAME_TABLES
_RULES_KEPT = 64  # (variant, players) pairs whose _Rules are kept; the cache starts over after


class _Rules:
    """What a game needs of its variant for a number of players, worked out once.

    Games of the same variant and size are started again and again (simulations, matches,
    benchmarks); the schedule, how each deal finds its trump and the score of every bid and
    outcome do not change between them, so they are looked up rather than re-derived.
    """

    __slots__ = (
        "deals",
        "hook",
        "in_play",
        "must_trump",
        "schedule",
        "score_tables",
        "variant",
        "variant_dict",
    )

    def __init__(self, variant: Variant, players: int) -> None:
        self.variant = variant
        # Every observation shows the variant; callers get a copy (engine/observation.py).
        self.variant_dict = variant.to_dict()
        self.schedule = schedule = variant.schedule(players)
        self.in_play = variant.cards_in_play(players)
        self.hook = variant.hook
        self.must_trump = variant.must_trump
        self.deals = tuple(self._deal_spec(k, h * players) for k, h in enumerate(schedule))
        self.score_tables: dict[int, tuple[tuple[int, ...], ...]] = {}

    def _deal_spec(self, k: int, dealt: int) -> tuple[int, int]:
        """(position in the shuffled pack of the card turned for trump or -1, fixed trump or -1).

        A suit fixed by the cycle has no card; "no trump" is -1 for both.
        """
        v = self.variant
        if v.last_deal_no_trump and k == len(self.schedule) - 1:
            return -1, -1
        if v.trump is Trump.TURN_UP:
            return (dealt if dealt < self.in_play else -1), -1
        if v.trump is Trump.DEALER_LAST_CARD:
            return dealt - 1, -1
        symbol = v.trump_cycle[k % len(v.trump_cycle)]
        return -1, (SUITS.index(symbol) if symbol in SUITS else -1)

    def score_table(self, tricks: int) -> tuple[tuple[int, ...], ...]:
        """Scores by bid then tricks taken, for a deal of ``tricks`` tricks."""
        table = self.score_tables.get(tricks)
        if table is None:
            v, span = self.variant, range(tricks + 1)
            table = tuple(tuple(deal_score(v, b, t, tricks) for t in span) for b in span)
            self.score_tables[tricks] = table
        return table


_RULES: dict[tuple[int, int], _Rules] = {}


def _rules_for(variant: Variant, players: int) -> _Rules:
    """The cached _Rules of ``variant`` for ``players``.

    Keyed by the variant's identity, as hashing its two dozen fields would cost more than the
    look-up saves; the cached _Rules holds the variant, so that identity cannot be reused.
    """
    rules = _RULES.get((id(variant), players))
    if rules is None:
        if len(_RULES) >= _RULES_KEPT:
            _RULES.clear()
        rules = _RULES[id(variant), players] = _Rules(variant, players)
    return rules


class DealRecord:
    """What happened in one deal: enough to re-play it and to show it."""

    __slots__ = (
        "bids",
        "dealer",
        "hand_size",
        "hands",
        "leaders",
        "plays",
        "scores",
        "tricks_won",
        "trump",
        "trump_card",
        "winners",
    )

    def __init__(
        self, dealer: int, hand_size: int, hands: tuple[int, ...], trump: int, trump_card: int
    ) -> None:
        self.dealer = dealer
        self.hand_size = hand_size
        self.hands = hands
        self.trump = trump
        self.trump_card = trump_card
        self.bids: list[int] = [-1] * len(hands)  # -1: not bid yet
        self.plays: list[int] = []
        self.leaders: list[int] = []
        self.winners: list[int] = []
        self.tricks_won: list[int] = [0] * len(hands)
        self.scores: list[int] = []

    def to_dict(self, number: int) -> dict[str, Any]:
        """Return the JSON form used in replays."""
        n = len(self.hands)
        played = list(map(CARD_NAMES.__getitem__, self.plays))
        tricks = [
            {"leader": leader, "cards": played[t : t + n], "winner": winner}
            for t, leader, winner in zip(
                range(0, len(played), n), self.leaders, self.winners, strict=False
            )
        ]
        if len(self.leaders) > len(self.winners):  # a trick in progress has no winner yet
            start = len(self.winners) * n
            tricks.append({"leader": self.leaders[-1], "cards": played[start:], "winner": None})
        return {
            "number": number,
            "dealer": self.dealer,
            "hand_size": self.hand_size,
            "hands": [list(card_names(h)) for h in self.hands],
            "trump": SUITS[self.trump] if self.trump >= 0 else None,
            "trump_card": CARD_NAMES[self.trump_card] if self.trump_card >= 0 else None,
            "bids": [b if b >= 0 else None for b in self.bids],
            "tricks": tricks,
            "tricks_won": list(self.tricks_won),
            "scores": list(self.scores),
        }


class Game:
    """One game of a variant for a number of players, fully determined by its seed and actions.

    ``phase`` is ``bid``, ``play`` or ``over``; ``to_act`` is the seat to move.
    """

    __slots__ = (
        "_bid_count",
        "_bids",
        "_deal",
        "_hands",
        "_hook",
        "_leaders",
        "_led_mask",
        "_legal",
        "_plays",
        "_rng",
        "_rules",
        "_trick",
        "_tricks_done",
        "_tricks_won",
        "_trump",
        "_trump_mask",
        "_trump_suit",
        "_winners",
        "bonus",
        "dealer",
        "deals",
        "first_dealer",
        "hand_size",
        "leader",
        "phase",
        "players",
        "seed",
        "to_act",
        "totals",
        "variant",
    )

    def __init__(self, variant: Variant, players: int, seed: int) -> None:
        variant.check_players(players)
        self.variant = variant
        self.players = players
        self.seed = seed
        self._rng = new_rng(seed)
        self._rules = rules = _rules_for(variant, players)
        self._hook = rules.hook
        self.first_dealer = first_dealer(self._rng, variant.first_dealer, players)
        self.totals = [0] * players
        self.bonus = [0] * players
        self.deals: list[DealRecord] = []
        self._start_deal()

    # -- the deal --------------------------------------------------------------------------

    def _start_deal(self) -> None:
        n, k, rules = self.players, len(self.deals), self._rules
        h = rules.schedule[k]
        self.dealer = dealer = (self.first_dealer + k) % n
        eldest = (dealer + 1) % n
        dealt = n * h
        # The pack is shuffled as each card's bit rather than its index (the same swaps, so
        # the same deal), so that a hand is the plain sum of its cards' distinct bits.
        deck = shuffled_prefix(self._rng, dealt + 1, CARD_BITS)
        # One card at a time clockwise from eldest: the seat ``j`` places after eldest gets
        # every n-th card from position j.
        hands = [0] * n
        for j in range(n):
            hands[(eldest + j) % n] = sum(deck[j:dealt:n])
        turned_at, trump = rules.deals[k]
        trump_card = deck[turned_at].bit_length() - 1 if turned_at >= 0 else -1
        if trump_card >= 0:
            trump = trump_card // 13
        self._hands = hands
        self._trump = trump
        self._trump_suit = SUIT_MASKS[trump] if trump >= 0 else 0
        self._trump_mask = self._trump_suit if rules.must_trump else 0
        self._deal = deal = DealRecord(dealer, h, tuple(hands), trump, trump_card)
        self.deals.append(deal)
        self.hand_size = h
        self._bids, self._tricks_won = deal.bids, deal.tricks_won
        self._bid_count = 0
        self._plays, self._leaders, self._winners = deal.plays, deal.leaders, deal.winners
        self._tricks_done = 0
        self._trick: list[int] = []
        self._led_mask = 0
        self._legal = 0
        self.leader = eldest
        self.to_act: int | None = eldest
        self.phase = _BID

    # -- facts -----------------------------------------------------------------------------

    @property
    def acting_seat(self) -> int:
        """The seat to move, as ``to_act``; raises GameOverError once the game is over."""
        if self.to_act is None:
            raise errors.GameOverError("the game is over")
        return self.to_act

    @property
    def deal_number(self) -> int:
        """The current deal, counting from 1."""
        return len(self.deals)

    @property
    def schedule(self) -> tuple[int, ...]:
        """Hand size of every deal that may be played."""
        return self._rules.schedule

    def variant_dict(self) -> dict[str, Any]:
        """The variant's options as ``Variant.to_dict`` gives them, in a new dict."""
        return dict(self._rules.variant_dict)

    @property
    def is_over(self) -> bool:
        """Tell whether the game has ended."""
        return self.phase is _OVER

    @property
    def trump(self) -> str | None:
        """The trump suit of the current deal, or None."""
        return SUITS[self._trump] if self._trump >= 0 else None

    @property
    def trump_card(self) -> str | None:
        """The card turned to fix trump in the current deal, or None."""
        card = self._deal.trump_card
        return CARD_NAMES[card] if card >= 0 else None

    @property
    def bids(self) -> list[int | None]:
        """Bids of the current deal by seat (None where not made). Not a seat's view."""
        return [b if b >= 0 else None for b in self._bids]

    @property
    def tricks_won(self) -> list[int]:
        """Tricks won so far in the current deal, by seat."""
        return list(self._tricks_won)

    def hand(self, seat: int) -> tuple[str, ...]:
        """The cards a seat holds now."""
        return card_names(self._hands[seat])

    def hand_mask(self, seat: int) -> int:
        """The cards a seat holds now, as a bit mask."""
        return self._hands[seat]

    @property
    def trick(self) -> list[str]:
        """Cards of the trick in progress, in the order played."""
        plays = self._plays
        return [CARD_NAMES[c] for c in plays[len(plays) - len(self._trick) :]]

    # -- legal actions ---------------------------------------------------------------------

    def forbidden_bid(self) -> int | None:
        """The bid the hook forbids to the seat to act, if any."""
        if not self._hook or self.phase is not _BID or self.to_act != self.dealer:
            return None
        forbidden = self.hand_size - (sum(self._bids) + 1)  # the dealer's own -1 is in the sum
        return forbidden if 0 <= forbidden <= self.hand_size else None

    def legal_bids(self) -> tuple[int, ...]:
        """Bids the seat to act may make."""
        if self.phase is not _BID:
            return ()
        bids = _BID_RANGES[self.hand_size]
        if not self._hook or self.to_act != self.dealer:
            return bids
        forbidden = self.forbidden_bid()
        if forbidden is None:
            return bids
        return bids[:forbidden] + bids[forbidden + 1 :]

    def legal_mask(self) -> int:
        """Cards the seat to act may play, as a bit mask (0 outside the play phase)."""
        return self._legal

    def legal_cards(self) -> tuple[str, ...]:
        """Cards the seat to act may play."""
        return card_names(self._legal) if self.phase is _PLAY else ()

    def legal_actions(self) -> tuple[int, ...] | tuple[str, ...]:
        """Bids during bidding, cards during play, nothing once the game is over.

        The card names are looked up here as ``card_names`` would, without calling it: this
        is asked before every card of every game, and the call saved shows.
        """
        if self.phase is _PLAY:
            legal = self._legal
            return (
                _CLUBS[legal & 0x1FFF]
                + _DIAMONDS[legal >> 13 & 0x1FFF]
                + _HEARTS[legal >> 26 & 0x1FFF]
                + _SPADES[legal >> 39]
            )
        if self.phase is _BID:
            if self.to_act != self.dealer:  # only the dealer may find a bid forbidden
                return _BID_RANGES[self.hand_size]
            return self.legal_bids()
        return ()

    # -- actions ---------------------------------------------------------------------------

    def _check_turn(self, seat: int | None, phase: Phase) -> None:
        if self.phase is _OVER:
            raise errors.GameOverError("the game is over")
        if seat is not None and seat != self.to_act:
            raise errors.OutOfTurnError(
                f"seat {seat} acted out of turn; seat {self.to_act} is to act"
            )
        if self.phase is not phase:
            raise errors.WrongPhaseError(f"cannot {phase} during the {self.phase} phase")

    def bid(self, bid: int, seat: int | None = None) -> None:
        """Make a bid for the seat to act (``seat``, if given, must be that seat)."""
        if self.phase is not _BID or (seat is not None and seat != self.to_act):
            self._check_turn(seat, _BID)
        h = self.hand_size
        if type(bid) is not int or not 0 <= bid <= h:
            raise errors.BidOutOfRangeError(f"bid must be an integer from 0 to {h}, not {bid!r}")
        seat = self.to_act
        assert seat is not None  # the phase is BID, so the game is not over
        if seat == self.dealer and self._hook and bid == self.forbidden_bid():
            raise errors.HookViolationError(
                f"the dealer may not bid {bid}: the bids would add up to the {h} tricks (hook)"
            )
        self._bids[seat] = bid
        self._bid_count += 1
        if self._bid_count == self.players:
            self.phase = _PLAY
            self.to_act = self.leader
            self._legal = self._hands[self.leader]
        else:
            self.to_act = seat + 1 if seat + 1 < self.players else 0

    def play(self, card: str, seat: int | None = None) -> None:
        """Play a card, written like ``TD``, for the seat to act."""
        if self.phase is not _PLAY:
            self._check_turn(seat, _PLAY)
        self.apply(card, seat)

    def apply(self, action: int | str, seat: int | None = None) -> None:
        """Apply a bid (int) or a card (str), whichever the phase needs.

        A card is played right here rather than handed on to ``play`` (which checks the phase
        and comes here): every card of every game passes this way, and a call less shows.
        """
        if self.phase is not _PLAY or (seat is not None and seat != self.to_act):
            if self.phase is _BID:
                if isinstance(action, str):
                    self._check_turn(seat, _PLAY)  # raises: out of turn, or wrong phase
                return self.bid(action, seat)  # type: ignore[arg-type]
            self._check_turn(seat, _PLAY)  # raises: the game is over, or not this seat's turn
        try:
            index = CARD_INDEX[action]  # type: ignore[index]
        except (KeyError, TypeError):
            raise errors.NotACardError(
                f"{action!r} is not a card; write rank then suit, like 'TD'"
            ) from None
        bit = CARD_BITS[index]
        if not self._legal & bit:
            self._raise_why_illegal(action, bit)  # type: ignore[arg-type]
        seat, n, hands = self.to_act, self.players, self._hands
        assert seat is not None  # the phase is PLAY, so the game is not over
        hands[seat] ^= bit
        self._plays.append(index)
        trick = self._trick  # the bits of the trick's cards, for _end_trick to add up
        trick.append(bit)
        played = len(trick)
        if played == 1:
            self._led_mask = SUIT_MASKS[index // 13]
            self._leaders.append(seat)
        elif played == n:
            return self._end_trick()
        seat = seat + 1 if seat + 1 < n else 0
        self.to_act = seat
        hand = hands[seat]
        # Follow suit if able; else, under must-trump, trump if able; else anything.
        self._legal = (hand & self._led_mask) or (hand & self._trump_mask) or hand
        return None

    def _raise_why_illegal(self, card: str, bit: int) -> None:
        assert self.to_act is not None  # only called during play
        hand = self._hands[self.to_act]
        if not hand & bit:
            raise errors.CardNotInHandError(f"seat {self.to_act} does not hold {card}")
        led = SUITS[self._plays[-len(self._trick)] // 13]
        if hand & self._led_mask:
            raise errors.FollowSuitError(f"{card} does not follow suit: {led} was led")
        raise errors.MustTrumpError(
            f"{card} is not a trump: a player void in {led} must trump (must-trump rule)"
        )

    def _end_trick(self) -> None:
        position = winning_position(self._trick, self._trump_suit, self._led_mask)
        winner = (self._leaders[-1] + position) % self.players
        self._winners.append(winner)
        self._tricks_won[winner] += 1
        self._tricks_done += 1
        self._trick = []
        self._led_mask = 0
        self.leader = self.to_act = winner
        if self._tricks_done == self.hand_size:
            self._legal = 0
            self._finish_deal()
        else:
            self._legal = self._hands[winner]

    def _finish_deal(self) -> None:
        table = self._rules.score_table(self.hand_size)  # by bid, then tricks taken
        scores = [table[b][t] for b, t in zip(self._bids, self._tricks_won, strict=True)]
        self._deal.scores = scores
        totals = self.totals
        for seat, score in enumerate(scores):
            totals[seat] += score
        target = self.variant.target_score
        reached = target is not None and max(totals) >= target
        if reached or len(self.deals) == len(self._rules.schedule):
            self._finish_game()
        else:
            self._start_deal()

    def _finish_game(self) -> None:
        self.phase = _OVER
        self.to_act = None
        if self.variant.winner_bonus:
            # Tied winners all get the bonus, so a tie stays a tie.
            for seat in winners(self.totals):
                self.bonus[seat] = self.variant.winner_bonus
                self.totals[seat] += self.variant.winner_bonus

    # -- results ---------------------------------------------------------------------------

    def ranks(self) -> list[int]:
        """Rank of each seat by total (1 is best; equal totals share a rank)."""
        return shared_ranks(self.totals)

    def standings(self) -> list[dict[str, int]]:
        """Seats ordered by rank, with total and rank."""
        ranks = self.ranks()
        order = sorted(range(self.players), key=lambda s: (ranks[s], s))
        return [{"seat": s, "total": self.totals[s], "rank": ranks[s]} for s in order]

    def exact_bids(self) -> list[int]:
        """Number of finished deals in which each seat made its bid exactly."""
        made = [0] * self.players
        for deal in self.deals[: self.finished_deals()]:
            for seat, (b, t) in enumerate(zip(deal.bids, deal.tricks_won, strict=False)):
                made[seat] += b == t
        return made

    def finished_deals(self) -> int:
        """Number of deals played to the end."""
        return len(self.deals) if self.phase is _OVER else len(self.deals) - 1

    def observation(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` may know now (docs/rules.md section 4), as a JSON-ready dict."""
        from engine.observation import observe

        return observe(self, seat)

    def replay(self) -> dict[str, Any]:
        """The versioned JSON record of the game so far."""
        from engine.replay import to_replay

        return to_replay(self)


def winning_position(trick: list[int], trump_mask: int, led_mask: int) -> int:
    """Position of the winning card in a trick of card bits: highest trump, else of the suit led.

    The mask of the trick's cards is cut to the trumps (``trump_mask`` is 0 without trump),
    or else to the suit led; its highest bit is the winning card.
    """
    cards = sum(trick)
    best = (cards & trump_mask) or (cards & led_mask)
    return trick.index(1 << best.bit_length() - 1)
