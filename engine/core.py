"""Games for search and self-play: the compiled core where it was built, else the reference.

``new_game(variant, players, seed)`` returns a game spoken to in bid numbers and card indices
(0..51, engine/cards.py), with bit masks for hands and legal actions, ``clone`` for search and
``playout`` for random play to the end. The compiled core (engine/_core.pyx, built by setup.py
where a C compiler works) plays exactly as ``engine.game.Game``; ``ReferenceGame`` gives the
same interface over ``Game`` itself, and is used when the core is missing or when
``OHHELL_ENGINE_CORE=reference`` asks for it. tests/engine/test_core.py holds both to ``Game``.
"""

from __future__ import annotations

import copy
import os
from types import ModuleType
from typing import Protocol

from engine.cards import CARD_NAMES
from engine.dealing import check_seed
from engine.errors import EngineError, IllegalActionError
from engine.game import Game, Phase, _rules_for
from engine.variant import FirstDealer, Variant

_compiled: ModuleType | None
try:
    from engine import _core as _compiled
except ImportError:  # not built: no compiler where it was installed
    _compiled = None

_PHASES = {Phase.BID: 0, Phase.PLAY: 1, Phase.OVER: 2}
_FIRST_DEALERS = (FirstDealer.RANDOM, FirstDealer.DRAW, FirstDealer.FIRST_JACK)
_RULES_KEPT = 64


class CoreGame(Protocol):
    """What search and self-play use of a game; phases are 0 bid, 1 play, 2 over."""

    @property
    def first_dealer(self) -> int: ...
    @property
    def dealer(self) -> int: ...
    @property
    def hand_size(self) -> int: ...
    @property
    def leader(self) -> int: ...
    @property
    def phase(self) -> int: ...
    @property
    def to_act(self) -> int | None: ...
    @property
    def deal_number(self) -> int: ...
    @property
    def trump(self) -> int: ...
    @property
    def trump_card(self) -> int: ...
    @property
    def totals(self) -> list[int]: ...
    @property
    def bonus(self) -> list[int]: ...
    @property
    def bids(self) -> list[int]: ...
    @property
    def tricks_won(self) -> list[int]: ...
    def hand_mask(self, seat: int) -> int: ...
    def legal_mask(self) -> int: ...
    def legal_bids(self) -> int: ...
    def bid(self, bid: int) -> None: ...
    def play(self, card: int) -> None: ...
    def clone(self) -> CoreGame: ...
    def set_hands(self, hands: list[int]) -> None: ...
    def playout(self, seed: int, deals: int = 0) -> None: ...


def compiled_available() -> bool:
    """Tell whether the compiled core was built and is not switched off."""
    return _compiled is not None and os.environ.get("OHHELL_ENGINE_CORE") != "reference"


_CORE_RULES: dict[tuple[int, int], tuple[Variant, object]] = {}


def new_game(
    variant: Variant, players: int, seed: int, *, compiled: bool | None = None
) -> CoreGame:
    """A new game of ``variant``: compiled unless ``compiled`` is False or the core is missing."""
    variant.check_players(players)
    check_seed(seed)
    if compiled is None:
        compiled = compiled_available()
    if not compiled:
        return ReferenceGame(Game(variant, players, seed))
    if _compiled is None:
        raise EngineError("the compiled core is not built here (see engine/README.md)")
    kept = _CORE_RULES.get((id(variant), players))
    if kept is None:
        if len(_CORE_RULES) >= _RULES_KEPT:
            _CORE_RULES.clear()
        rules = _compiled.CoreRules(
            _rules_for(variant, players), players, _FIRST_DEALERS.index(variant.first_dealer)
        )
        kept = _CORE_RULES[id(variant), players] = (variant, rules)
    game: CoreGame = _compiled.CoreGame(kept[1], seed)
    return game


def _masked(mask: int) -> list[int]:
    """The set bits of a mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class ReferenceGame:
    """``CoreGame`` over the pure-Python ``Game``: the fallback, and the reference in tests."""

    def __init__(self, game: Game) -> None:
        self.game = game

    @property
    def first_dealer(self) -> int:
        return self.game.first_dealer

    @property
    def dealer(self) -> int:
        return self.game.dealer

    @property
    def hand_size(self) -> int:
        return self.game.hand_size

    @property
    def leader(self) -> int:
        return self.game.leader

    @property
    def phase(self) -> int:
        return _PHASES[self.game.phase]

    @property
    def to_act(self) -> int | None:
        return self.game.to_act

    @property
    def deal_number(self) -> int:
        return self.game.deal_number

    @property
    def trump(self) -> int:
        return self.game._trump

    @property
    def trump_card(self) -> int:
        return self.game.deals[-1].trump_card

    @property
    def totals(self) -> list[int]:
        return list(self.game.totals)

    @property
    def bonus(self) -> list[int]:
        return list(self.game.bonus)

    @property
    def bids(self) -> list[int]:
        return list(self.game._bids)

    @property
    def tricks_won(self) -> list[int]:
        return self.game.tricks_won

    def hand_mask(self, seat: int) -> int:
        return self.game.hand_mask(seat)

    def legal_mask(self) -> int:
        return self.game.legal_mask()

    def legal_bids(self) -> int:
        return sum(1 << b for b in self.game.legal_bids())

    def bid(self, bid: int) -> None:
        if not (0 <= bid < 64 and self.legal_bids() >> bid & 1):
            raise IllegalActionError(f"bid {bid} is not legal now")
        self.game.bid(bid)

    def play(self, card: int) -> None:
        if not 0 <= card < 52 or not self.game.legal_mask() >> card & 1:
            raise IllegalActionError(f"card {card} is not legal now")
        self.game.apply(CARD_NAMES[card])

    def clone(self) -> ReferenceGame:
        game = self.game
        shared = {id(game._rules): game._rules, id(game.variant): game.variant}
        return ReferenceGame(copy.deepcopy(game, shared))

    def set_hands(self, hands: list[int]) -> None:
        game = self.game
        if len(hands) != game.players:
            raise IllegalActionError(f"need {game.players} hands")
        for seat, hand in enumerate(hands):
            if hand.bit_count() != game._hands[seat].bit_count():
                raise IllegalActionError(f"seat {seat}: a hand of another size")
        game._hands[:] = hands
        if game.phase is Phase.PLAY and game.to_act is not None:
            hand = hands[game.to_act]
            game._legal = (hand & game._led_mask) or (hand & game._trump_mask) or hand

    def playout(self, seed: int, deals: int = 0) -> None:
        check_seed(seed)
        rng, game = SplitMix64(seed), self.game
        stop_at = game.deal_number + deals if deals > 0 else -1
        while not game.is_over and game.deal_number != stop_at:
            if game.phase is Phase.BID:
                bids = game.legal_bids()
                game.bid(bids[rng.below(len(bids))])
            else:
                cards = _masked(game.legal_mask())
                game.apply(CARD_NAMES[cards[rng.below(len(cards))]])


class SplitMix64:
    """The random stream of playouts: cheap to seed (a search seeds one per rollout), and the
    same in engine/_core.pyx, so both implementations play the same playout from a seed."""

    MASK = (1 << 64) - 1

    def __init__(self, seed: int) -> None:
        self.state = seed & self.MASK

    def next(self) -> int:
        """The next 64-bit output."""
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        """Uniform in 0..bound-1, by rejection on the top bits."""
        shift = 64 - bound.bit_length()
        r = self.next() >> shift
        while r >= bound:
            r = self.next() >> shift
        return r
