"""The search player: determinised Monte Carlo over the current deal, heuristic rollouts.

For each decision it deals the unseen cards to the other seats many times, consistently with
what its observation shows, plays every candidate action out to the end of the deal with the
heuristic policy for all seats, and keeps the action with the best mean deal score.
"""

from __future__ import annotations

import random
import time
from typing import Any

from engine.cards import CARD_INDEX
from engine.errors import InvalidPlayerError
from engine.players.heuristic import estimate_from_obs
from engine.players.policy import choose_bid, estimate_tricks
from engine.players.sim import rollout, sample_hands
from engine.players.view import View, read_view
from engine.scoring import deal_score
from engine.variant import Variant


class SearchPlayer:
    """Monte Carlo player with an explicit budget.

    ``samples`` deals are drawn per decision (each candidate action is tried on the same
    deals, so their comparison is fair); ``max_ms``, if set, stops sampling early once that
    much time is spent (at least one deal is always tried). ``bid_spread`` limits bids tried
    to those within that many tricks of the heuristic estimate. ``rivalry`` weighs the mean
    score of the other seats against the player's own (0 plays for points, 1 for the margin).
    Without ``max_ms`` every choice is a function of the seed and the observations alone.
    """

    name = "search"

    def __init__(
        self,
        seed: int = 0,
        samples: int = 24,
        max_ms: float | None = None,
        bid_spread: int = 2,
        rivalry: float = 0.0,
    ) -> None:
        if type(samples) is not int or samples < 1:
            raise InvalidPlayerError(f"samples must be a positive integer, not {samples!r}")
        if max_ms is not None and (not isinstance(max_ms, int | float) or max_ms <= 0):
            raise InvalidPlayerError(f"max_ms must be a positive number, not {max_ms!r}")
        self.rng = random.Random(seed)
        self.samples = samples
        self.max_ms = max_ms
        self.bid_spread = bid_spread
        self.rivalry = float(rivalry)
        self._variants: dict[tuple[Any, ...], Variant] = {}

    # -- decisions -----------------------------------------------------------------------

    def bid(self, obs: dict[str, Any], legal: tuple[int, ...]) -> int:
        """Try the plausible bids on sampled deals and keep the best on average."""
        estimate = estimate_from_obs(obs)
        candidates = [b for b in legal if abs(b - estimate) <= self.bid_spread]
        if len(candidates) <= 1:
            return candidates[0] if candidates else choose_bid(estimate, legal)
        view, variant = read_view(obs), self._variant(obs)
        totals = [0.0] * len(candidates)
        deadline = self._deadline()
        for k in range(self.samples):
            hands = sample_hands(view, self.rng)
            guesses = _guess_bids(view, hands)
            for i, bid in enumerate(candidates):
                bids = _complete_bids(view, guesses, bid, variant)
                won = rollout(hands, [], view.leader, view, bids, view.won)
                totals[i] += self._utility(variant, view, bids, won)
            if k and deadline is not None and time.perf_counter() >= deadline:
                break
        return candidates[_best(totals)]

    def play(self, obs: dict[str, Any], legal: tuple[str, ...]) -> str:
        """Play each legal card out on sampled deals and keep the best on average."""
        if len(legal) == 1:
            return legal[0]
        view, variant = read_view(obs), self._variant(obs)
        cards = [CARD_INDEX[name] for name in legal]
        totals = [0.0] * len(cards)
        deadline = self._deadline()
        me = view.seat
        for k in range(self.samples):
            hands = sample_hands(view, self.rng)
            for i, card in enumerate(cards):
                hands_after = list(hands)
                hands_after[me] ^= 1 << card
                won = rollout(
                    hands_after, [*view.trick, card], view.leader, view, view.bids, view.won
                )
                totals[i] += self._utility(variant, view, view.bids, won)
            if k and deadline is not None and time.perf_counter() >= deadline:
                break
        return legal[_best(totals)]

    # -- helpers ---------------------------------------------------------------------------

    def _deadline(self) -> float | None:
        return None if self.max_ms is None else time.perf_counter() + self.max_ms / 1000.0

    def _utility(self, variant: Variant, view: View, bids: list[int], won: list[int]) -> float:
        """Own deal score, less ``rivalry`` times the others' mean."""
        h, me = view.hand_size, view.seat
        own = deal_score(variant, bids[me], won[me], h)
        if not self.rivalry:
            return own
        others = [deal_score(variant, bids[s], won[s], h) for s in range(view.players) if s != me]
        return own - self.rivalry * sum(others) / len(others)

    def _variant(self, obs: dict[str, Any]) -> Variant:
        key = tuple(sorted(obs["variant"].items()))
        variant = self._variants.get(key)
        if variant is None:
            variant = self._variants[key] = Variant.from_dict(obs["variant"])
        return variant


def _best(totals: list[float]) -> int:
    """Index of the highest total (the first on ties, so choices stay deterministic)."""
    return max(range(len(totals)), key=lambda i: (totals[i], -i))


def _guess_bids(view: View, hands: list[int]) -> list[float]:
    """The heuristic's trick estimate for every seat whose bid is not known."""
    seen = 1 << view.trump_card if view.trump_card >= 0 and view.trump_holder < 0 else 0
    return [
        estimate_tricks(hands[s], view.trump, view.players, seen) if view.bids[s] < 0 else 0.0
        for s in range(view.players)
    ]


def _complete_bids(view: View, guesses: list[float], own: int, variant: Variant) -> list[int]:
    """Fill in the unknown bids as the heuristic would make them, the hook included."""
    n, h = view.players, view.hand_size
    bids = list(view.bids)
    bids[view.seat] = own
    all_bids = tuple(range(h + 1))
    for step in range(1, n + 1):
        seat = (view.dealer + step) % n
        if bids[seat] >= 0:
            continue
        legal = all_bids
        if variant.hook and seat == view.dealer:
            forbidden = h - sum(b for b in bids if b >= 0)
            legal = tuple(b for b in all_bids if b != forbidden)
        bids[seat] = choose_bid(guesses[seat], legal)
    return bids
