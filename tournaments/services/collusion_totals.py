"""The running collusion sums, added to in the transaction that rates each unit.

Rating a unit (tournaments/services/ratings.py, ``rate_unit``) hands its finishing orders and the
ratings before it to a ``CollusionRecorder``; ``save`` adds them, in rating order, to the stored
sums of the bots and pairs they touch (tournaments/maths/collusion.py). A recompute of the
ratings replays the same units in the same order from empty sums
(tournaments/services/recompute.py), so it rebuilds the same numbers to the last bit.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from tournaments.maths.collusion import Moments, PairSums, Totals, rating_chance
from tournaments.maths.intervals import Finish
from tournaments.models import CollusionBotTotal, CollusionPairTotal
from tournaments.services.rows import CHUNK


@dataclass(frozen=True, slots=True)
class RatedUnit:
    """One unit's finishing orders, with each bot's (mu, sigma) before it and the variant's beta."""

    finishes: list[Finish]
    before: dict[int, tuple[float, float]]
    beta: float

    def chance(self, x: int, y: int) -> float:
        (mu_x, sigma_x), (mu_y, sigma_y) = self.before[x], self.before[y]
        return rating_chance(mu_x, sigma_x, mu_y, sigma_y, self.beta)


@dataclass
class CollusionRecorder:
    """Units rated in one transaction, by variant in rating order, until ``save``."""

    units: dict[int, list[RatedUnit]] = field(default_factory=lambda: defaultdict(list))

    def add(self, *, variant_id: int, unit: RatedUnit) -> None:
        self.units[variant_id].append(unit)

    def save(self) -> None:
        """Add the units to the stored sums and forget them."""
        for variant_id, units in self.units.items():
            _save_variant(variant_id, units)
        self.units.clear()


def _save_variant(variant_id: int, units: list[RatedUnit]) -> None:
    """Load the touched sums, add the units in order, and write back what changed."""
    bots = {b for unit in units for finish in unit.finishes for b in finish.bots}
    touched: set[tuple[int, int]] = set()
    for unit in units:
        met = {b for finish in unit.finishes for b in finish.bots}
        touched.update(combinations(sorted(met), 2))
    totals = _load(variant_id, bots)
    for unit in units:
        totals.add(unit.finishes, unit.chance)
    CollusionBotTotal.objects.bulk_create(
        [
            CollusionBotTotal(
                variant_id=variant_id,
                bot_id=bot,
                n=m.n,
                total=m.total,
                squares=m.squares,
                raw=m.raw,
            )
            for bot, m in totals.bots.items()
        ],
        batch_size=CHUNK,
        update_conflicts=True,
        unique_fields=["variant", "bot"],
        update_fields=["n", "total", "squares", "raw"],
    )
    CollusionPairTotal.objects.bulk_create(
        [
            CollusionPairTotal(
                variant_id=variant_id,
                first_id=first,
                second_id=second,
                tables=sums.gap.n,
                sums=sums.to_list(),
            )
            for (first, second), sums in totals.pairs.items()
            if (first, second) in touched
        ],
        batch_size=CHUNK,
        update_conflicts=True,
        unique_fields=["variant", "first", "second"],
        update_fields=["tables", "sums"],
    )


def _load(variant_id: int, bots: set[int]) -> Totals:
    """The stored sums of ``bots`` and of the pairs among them."""
    totals = Totals()
    for bot, n, total, squares, raw in CollusionBotTotal.objects.filter(
        variant_id=variant_id, bot_id__in=bots
    ).values_list("bot_id", "n", "total", "squares", "raw"):
        totals.bots[bot] = Moments(n, total, squares, raw)
    pairs = CollusionPairTotal.objects.filter(
        variant_id=variant_id, first_id__in=bots, second_id__in=bots
    ).values_list("first_id", "second_id", "sums")
    for first, second, sums in pairs:
        totals.pairs[first, second] = PairSums.from_list(sums)
    return totals


def collusion_totals_clear() -> None:
    """Drop every sum (a recompute of the ratings then adds every unit again)."""
    CollusionPairTotal.objects.all().delete()
    CollusionBotTotal.objects.all().delete()
