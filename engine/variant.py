"""A variant: an immutable, JSON-serialisable set of rule options, validated up front.

Every option of docs/rules.md section 3 is a field. ``OPTIONS`` documents the schema (default,
allowed values, meaning) and drives validation, so the API, the CLI and the docs read the
same table.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine.errors import InvalidVariantError

MIN_PLAYERS, MAX_PLAYERS = 3, 8
PACK = 52
SCHEMA_VERSION = 1


class MaxCards(StrEnum):
    """The named largest hands; ``max_cards`` may also be a number."""

    DEFAULT = "default"
    SEVEN = "seven"
    MAX_POSSIBLE = "max_possible"
    MAX_LEAVING_TRUMP = "max_leaving_trump"


class Order(StrEnum):
    """How hand sizes run over the deals."""

    DOWN_UP = "down_up"
    UP_DOWN = "up_down"
    UP = "up"
    DOWN = "down"
    CONSTANT = "constant"


class FirstDealer(StrEnum):
    """How the first dealer is chosen."""

    RANDOM = "random"
    DRAW = "draw"
    FIRST_JACK = "first_jack"


class Trump(StrEnum):
    """How trump is fixed each deal."""

    TURN_UP = "turn_up"
    DEALER_LAST_CARD = "dealer_last_card"
    FIXED = "fixed"


class TrumpCycle(StrEnum):
    """The cycle of trump suits under ``trump=fixed`` (N: no trump)."""

    SDCH = "SDCH"
    CDHS = "CDHS"
    CDHSN = "CDHSN"


class Bidding(StrEnum):
    """Open: bids are public in turn; closed: revealed together."""

    OPEN = "open"
    CLOSED = "closed"


class Made(StrEnum):
    """The score for an exact bid above zero."""

    TEN_PLUS_BID = "10+bid"
    TEN_TIMES_BID = "10*bid"
    TEN_PLUS_BID_SQUARED = "10+bid^2"
    TEN_PLUS_TWO_BID = "10+2*bid"
    FIVE_PLUS_BID = "5+bid"
    BONUS_ONLY = "bonus_only"


class MadeZero(StrEnum):
    """The score for an exact bid of zero."""

    TEN = "10"
    FIVE = "5"
    FIVE_PLUS_CARDS = "5+cards"
    TEN_PLUS_CARDS = "10+cards"


class Missed(StrEnum):
    """The score of a missed bid."""

    TAKEN = "taken"
    ZERO = "zero"
    MINUS_DIFF = "minus_diff"
    MINUS_DIFF_SQUARED = "minus_diff_squared"


class RemovedCards(StrEnum):
    """Which cards leave the pack before dealing."""

    NONE = "none"
    EVEN = "even"


# The options whose value is one of a closed set, and that set.
CHOICES: dict[str, type[StrEnum]] = {
    "removed_cards": RemovedCards,
    "order": Order,
    "first_dealer": FirstDealer,
    "trump": Trump,
    "trump_cycle": TrumpCycle,
    "bidding": Bidding,
    "made": Made,
    "made_zero": MadeZero,
    "missed_over": Missed,
    "missed_under": Missed,
}
DEFAULT_MAX = {3: 10, 4: 10, 5: 10, 6: 8, 7: 7, 8: 6}


def _values(choices: type[StrEnum]) -> tuple[str, ...]:
    return tuple(member.value for member in choices)


def _option(default: Any, values: Any, help_text: str) -> dict[str, Any]:
    return {"default": default, "values": values, "help": help_text}


OPTIONS: dict[str, dict[str, Any]] = {
    "min_players": _option(3, "integer 3..8", "fewest players the variant allows"),
    "max_players": _option(7, "integer 3..8", "most players the variant allows"),
    "removed_cards": _option(
        "none",
        _values(RemovedCards),
        "'even' removes 52 mod players cards so the pack divides evenly",
    ),
    "max_cards": _option(
        "default",
        [*_values(MaxCards), "integer >= 1"],
        "largest hand: default 10/8/7 for 3-5/6/7 players (6 for 8); seven; the most the pack"
        " allows; the most that leaves a card to turn up (at most 10); or a number",
    ),
    "order": _option("down_up", _values(Order), "how hand sizes run over the deals"),
    "deals": _option(None, "null or integer >= 1", "cap on the number of deals"),
    "first_dealer": _option("draw", _values(FirstDealer), "how the first dealer is chosen"),
    "trump": _option("turn_up", _values(Trump), "how trump is fixed each deal"),
    "trump_cycle": _option(
        "SDCH", _values(TrumpCycle), "cycle of trump suits under trump=fixed (N: none)"
    ),
    "last_deal_no_trump": _option(False, "boolean", "the final deal is played without trump"),
    "bidding": _option(
        "open", _values(Bidding), "open: bids public in turn; closed: revealed together"
    ),
    "hook": _option(True, "boolean", "the dealer may not make the bids add up to the tricks"),
    "must_trump": _option(False, "boolean", "a player void in the suit led must trump if able"),
    "made": _option("10+bid", _values(Made), "score for an exact bid above zero"),
    "made_zero": _option(
        "10", _values(MadeZero), "score for an exact bid of zero (cards = hand size)"
    ),
    "double_when_all": _option(False, "boolean", "an exact bid of every trick scores double"),
    "missed_over": _option("taken", _values(Missed), "score when taking more tricks than bid"),
    "missed_under": _option("taken", _values(Missed), "score when taking fewer tricks than bid"),
    "winner_bonus": _option(0, "integer >= 0", "points added to the winner's total at the end"),
    "target_score": _option(None, "null or integer >= 1", "end after the deal reaching this"),
    "max_deals": _option(100, "integer 1..1000", "safety cap on deals under target_score"),
    "announce_over_under": _option(
        False, "boolean", "announce whether the bids total over, under or even (Oh Pshaw)"
    ),
}


@dataclass(frozen=True, slots=True)
class Variant:
    """The full rules of one way to play: a name plus every option of docs/rules.md section 3."""

    name: str = "custom"
    min_players: int = 3
    max_players: int = 7
    removed_cards: RemovedCards = RemovedCards.NONE
    max_cards: MaxCards | int = MaxCards.DEFAULT
    order: Order = Order.DOWN_UP
    deals: int | None = None
    first_dealer: FirstDealer = FirstDealer.DRAW
    trump: Trump = Trump.TURN_UP
    trump_cycle: TrumpCycle = TrumpCycle.SDCH
    last_deal_no_trump: bool = False
    bidding: Bidding = Bidding.OPEN
    hook: bool = True
    must_trump: bool = False
    made: Made = Made.TEN_PLUS_BID
    made_zero: MadeZero = MadeZero.TEN
    double_when_all: bool = False
    missed_over: Missed = Missed.TAKEN
    missed_under: Missed = Missed.TAKEN
    winner_bonus: int = 0
    target_score: int | None = None
    max_deals: int = 100
    announce_over_under: bool = False

    def __post_init__(self) -> None:
        for option, choices in CHOICES.items():
            object.__setattr__(self, option, _choice(option, getattr(self, option), choices))
        if not isinstance(self.max_cards, int):
            object.__setattr__(self, "max_cards", _choice("max_cards", self.max_cards, MaxCards))
        _validate(self)

    # -- construction and serialisation -------------------------------------------------

    @classmethod
    def from_dict(cls, data: Any) -> Variant:
        """Build a variant from its dict form, refusing unknown options and bad values."""
        if not isinstance(data, dict):
            raise InvalidVariantError("variant", "must be a JSON object of options")
        if data.get("schema", SCHEMA_VERSION) != SCHEMA_VERSION:
            raise InvalidVariantError(
                "schema",
                f"unknown schema version {data['schema']!r}; this engine reads {SCHEMA_VERSION}",
            )
        fields = {f.name for f in dataclasses.fields(cls)}
        data = {k: v for k, v in data.items() if k != "schema"}
        for key in data:
            if key not in fields:
                raise InvalidVariantError(str(key), "unknown option")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict form; ``from_dict`` of it gives back an equal variant."""
        out: dict[str, Any] = {"schema": SCHEMA_VERSION}
        for f in dataclasses.fields(self):
            out[f.name] = getattr(self, f.name)
        return out

    def with_options(self, **overrides: Any) -> Variant:
        """Return a copy with some options changed (validated again)."""
        for key in overrides:
            if key not in OPTIONS and key != "name":
                raise InvalidVariantError(str(key), "unknown option")
        return dataclasses.replace(self, **overrides)

    # -- facts derived from the options --------------------------------------------------

    def check_players(self, players: int) -> None:
        """Refuse a player count outside this variant's range."""
        if type(players) is not int or not self.min_players <= players <= self.max_players:
            raise InvalidVariantError(
                "players",
                f"{players!r} players is outside this variant's range "
                f"{self.min_players}..{self.max_players}",
            )

    def removed(self, players: int) -> int:
        """Number of cards taken out of the pack for this many players."""
        return PACK % players if self.removed_cards is RemovedCards.EVEN else 0

    def cards_in_play(self, players: int) -> int:
        """Cards left in the pack once removed cards are out."""
        return PACK - self.removed(players)

    def largest_hand(self, players: int) -> int:
        """The largest hand size of the schedule for this many players."""
        in_play = self.cards_in_play(players)
        mc = self.max_cards
        if mc is MaxCards.DEFAULT:
            return DEFAULT_MAX[players]
        if mc is MaxCards.SEVEN:
            return 7
        if mc is MaxCards.MAX_POSSIBLE:
            return in_play // players
        if mc is MaxCards.MAX_LEAVING_TRUMP:
            return min(10, (in_play - 1) // players)
        return int(mc)

    def base_schedule(self, players: int) -> tuple[int, ...]:
        """Hand sizes of one pass of the order, before caps and repetition."""
        top = self.largest_hand(players)
        down = tuple(range(top, 0, -1))
        up = tuple(range(1, top + 1))
        return {
            Order.DOWN_UP: down + up[1:],
            Order.UP_DOWN: up + down[1:],
            Order.UP: up,
            Order.DOWN: down,
            Order.CONSTANT: (top,),
        }[self.order]

    def schedule(self, players: int) -> tuple[int, ...]:
        """Hand size of every deal that may be played (under target_score: up to the cap)."""
        base = self.base_schedule(players)
        if self.target_score is not None:
            length = self.max_deals if self.deals is None else min(self.deals, self.max_deals)
            return tuple(base[i % len(base)] for i in range(length))
        if self.order is Order.CONSTANT:
            return base * (self.deals or 1)
        return base if self.deals is None else base[: self.deals]

    def describe(self) -> list[str]:
        """The rules of this variant in plain words, one sentence a line."""
        from engine.describe import describe

        return describe(self)


def _fail(option: str, message: str) -> None:
    raise InvalidVariantError(option, message)


def _check_int(option: str, value: Any, low: int, high: int | None = None) -> None:
    if type(value) is not int:
        _fail(option, f"must be an integer, not {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"{low}..{high}" if high is not None else f">= {low}"
        _fail(option, f"must be {bound}, not {value}")


def _choice(option: str, value: Any, choices: type[StrEnum]) -> Any:
    """Return the member of ``choices`` that ``value`` names (a number may name "10")."""
    if type(value) is int:
        value = str(value)
    try:
        return choices(value)
    except ValueError:
        _fail(option, f"unknown value {value!r}; choose one of {', '.join(_values(choices))}")


def _validate(v: Variant) -> None:
    """Refuse any impossible configuration now, never mid-game."""
    if not isinstance(v.name, str) or not 1 <= len(v.name) <= 64:
        _fail("name", "must be a string of 1 to 64 characters")
    _check_int("min_players", v.min_players, MIN_PLAYERS, MAX_PLAYERS)
    _check_int("max_players", v.max_players, MIN_PLAYERS, MAX_PLAYERS)
    if v.min_players > v.max_players:
        _fail("min_players", f"{v.min_players} is more than max_players {v.max_players}")
    for option in (
        "last_deal_no_trump",
        "hook",
        "must_trump",
        "double_when_all",
        "announce_over_under",
    ):
        if type(getattr(v, option)) is not bool:
            _fail(option, f"must be true or false, not {getattr(v, option)!r}")
    if not isinstance(v.max_cards, MaxCards):
        _check_int("max_cards", v.max_cards, 1, PACK)
    if v.deals is not None:
        _check_int("deals", v.deals, 1, 1000)
    _check_int("winner_bonus", v.winner_bonus, 0, 10_000)
    _check_int("max_deals", v.max_deals, 1, 1000)
    if v.target_score is not None:
        if type(v.target_score) is not int or v.target_score < 1:
            _fail("target_score", f"must be a positive integer or null, not {v.target_score!r}")
        if v.last_deal_no_trump:
            _fail(
                "last_deal_no_trump",
                "needs a fixed schedule; the last deal under target_score is not known in advance",
            )
    if v.hook and v.bidding is Bidding.CLOSED:
        _fail(
            "hook",
            "needs open bidding: the dealer cannot see the other bids when bidding is closed",
        )
    if v.order is Order.CONSTANT and v.deals is None and v.target_score is None:
        _fail("order", "constant hand sizes need deals or target_score to end the game")
    _validate_pack(v)


def _validate_pack(v: Variant) -> None:
    for players in range(v.min_players, v.max_players + 1):
        in_play = v.cards_in_play(players)
        top = v.largest_hand(players)
        if top < 1:
            _fail("max_cards", f"leaves no card to deal to {players} players")
        if top * players > in_play:
            _fail(
                "max_cards",
                f"{top} cards each for {players} players needs {top * players} cards; "
                f"the pack has {in_play} in play",
            )
