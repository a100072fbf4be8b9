"""Specific errors, so callers (the arena, the API, tests) can tell what went wrong."""


class EngineError(ValueError):
    """Base of every error the rules engine raises on bad input."""


class InvalidVariantError(EngineError):
    """A variant, or a variant with a player count, that cannot be played.

    ``option`` names the offending option so an API can point at the bad field.
    """

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option
        self.reason = message


class InvalidSeedError(EngineError):
    """A seed that is not an integer from 0 to 2**63 - 1."""


class InvalidSeatError(EngineError):
    """A seat number that is not one of the game's seats."""


class InvalidPlayerError(EngineError):
    """An unknown reference player, bad options for one, or the wrong number of them."""


class IllegalActionError(EngineError):
    """An action the rules do not allow at this point of the game."""


class GameOverError(IllegalActionError):
    """The game has ended; no action is accepted."""


class OutOfTurnError(IllegalActionError):
    """A seat acted when it was another seat's turn."""


class WrongPhaseError(IllegalActionError):
    """A bid during play, or a card during bidding."""


class BidOutOfRangeError(IllegalActionError):
    """A bid that is not an integer from 0 to the hand size."""


class HookViolationError(IllegalActionError):
    """The dealer's bid would make the bids add up to the tricks available."""


class NotACardError(IllegalActionError):
    """A string that does not name a card (rank then suit, such as ``TD``)."""


class CardNotInHandError(IllegalActionError):
    """A card the seat does not hold."""


class FollowSuitError(IllegalActionError):
    """A card of another suit while the seat holds the suit led."""


class MustTrumpError(IllegalActionError):
    """A discard while the seat, void in the suit led, holds a trump (must-trump rule)."""


class InvalidReplayError(EngineError):
    """A replay that is malformed or does not re-play identically."""
