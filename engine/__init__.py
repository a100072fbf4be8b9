"""The rules of Oh Hell and its variants: pure Python, deterministic from a seed.

Used by the arena, the Django app, bot authors and the benchmarks. Nothing here imports Django.
"""

from engine.cards import CARD_NAMES, RANKS, SUITS
from engine.errors import (
    BidOutOfRangeError,
    CardNotInHandError,
    EngineError,
    FollowSuitError,
    GameOverError,
    HookViolationError,
    IllegalActionError,
    InvalidPlayerError,
    InvalidReplayError,
    InvalidSeatError,
    InvalidSeedError,
    InvalidVariantError,
    MustTrumpError,
    NotACardError,
    OutOfTurnError,
    WrongPhaseError,
)
from engine.game import Game, Phase
from engine.presets import PRESET_NOTES, PRESETS, preset
from engine.replay import replay_game, verify_replay
from engine.variant import OPTIONS, Variant

__all__ = [
    "CARD_NAMES",
    "OPTIONS",
    "PRESETS",
    "PRESET_NOTES",
    "RANKS",
    "SUITS",
    "BidOutOfRangeError",
    "CardNotInHandError",
    "EngineError",
    "FollowSuitError",
    "Game",
    "GameOverError",
    "HookViolationError",
    "IllegalActionError",
    "InvalidPlayerError",
    "InvalidReplayError",
    "InvalidSeatError",
    "InvalidSeedError",
    "InvalidVariantError",
    "MustTrumpError",
    "NotACardError",
    "OutOfTurnError",
    "Phase",
    "Variant",
    "WrongPhaseError",
    "preset",
    "replay_game",
    "verify_replay",
]
