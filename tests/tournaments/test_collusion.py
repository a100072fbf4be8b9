"""The collusion test over finishing orders (tournaments/collusion.py), without a database."""

from __future__ import annotations

import math

import pytest

from tests.support.collusion import Planted, season
from tournaments.collusion import benjamini_hochberg, detect
from tournaments.maths.intervals import Finish


def _units(finishes: list[Finish]) -> list[list[Finish]]:
    return [[f] for f in finishes]


def test_a_planted_pair_is_flagged_with_the_beneficiary_and_partner_the_right_way_round() -> None:
    finishes = season(10, 1200, seed=3, planted=Planted(beneficiary=4, partner=2))
    found = detect(_units(finishes), min_tables=20, false_discovery_rate=0.01)
    flagged = [e for e in found if e.flagged]
    assert [(e.beneficiary, e.partner) for e in flagged] == [(4, 2)]
    top = flagged[0]
    together = [f for f in finishes if {2, 4} <= set(f.bots)]
    assert top.tables == len(together)
    assert top.beneficiary_with > top.beneficiary_without
    assert top.partner_with < top.partner_without
    assert top.lift > 0 and top.drop > 0 and top.z > 0
    assert top.adjusted_p <= 0.01
    assert top.p_value == pytest.approx(math.erfc(top.z / math.sqrt(2)))


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_honest_fields_flag_no_pair(seed) -> None:
    found = detect(_units(season(10, 1200, seed=seed)), min_tables=20, false_discovery_rate=0.01)
    assert len(found) == 45  # every pair met often enough to be tested
    assert not [e for e in found if e.flagged]


def test_an_honest_pair_of_a_strong_and_a_weak_bot_is_not_taken_for_a_sacrifice() -> None:
    # The weak bot finishes below the strong one at their tables, but not below the others
    # more than it does anyway: only results against the other bots count.
    found = detect(_units(season(10, 3000, seed=9)), min_tables=20, false_discovery_rate=0.01)
    strong_weak = next(e for e in found if {e.beneficiary, e.partner} == {0, 9})
    assert abs(strong_weak.z) < 3
    assert not strong_weak.flagged


def test_pairs_with_too_few_tables_together_or_apart_are_not_tested() -> None:
    finishes = season(6, 60, seed=1)
    together = {
        (a, b): sum(1 for f in finishes if {a, b} <= set(f.bots))
        for a in range(6)
        for b in range(a + 1, 6)
    }
    found = detect(_units(finishes), min_tables=40, false_discovery_rate=0.05)
    tested = {tuple(sorted((e.beneficiary, e.partner))) for e in found}
    assert tested == {pair for pair, n in together.items() if n >= 40}
    # Four bots always at the same table together are never apart: nothing to compare.
    always = [Finish(bots=(1, 2, 3, 4), places=(1, 2, 3, 4)) for _ in range(50)]
    assert detect(_units(always), min_tables=2, false_discovery_rate=0.05) == []


def test_a_duplicate_group_counts_as_one_table() -> None:
    # Four rotations of one table, each finishing as the field would: one unit of four finishes.
    finishes = season(8, 800, seed=2)
    grouped = [
        [Finish(bots=f.bots, places=finishes[i + k].places) for k in range(4)]
        for i in range(0, 800, 4)
        for f in finishes[i : i + 1]
    ]
    shared = sum(1 for unit in grouped if {0, 1} <= set(unit[0].bots))
    found = detect(grouped, min_tables=2, false_discovery_rate=0.05)
    pair = next(e for e in found if {e.beneficiary, e.partner} == {0, 1})
    assert pair.tables == shared


def test_benjamini_hochberg_adjusts_as_the_step_up_rule() -> None:
    # m = 4: p * 4 / rank, then the running minimum from the largest down, capped at 1.
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.5]) == pytest.approx(
        [0.04, 0.0533333, 0.0533333, 0.5]
    )
    assert benjamini_hochberg([0.9, 0.8]) == pytest.approx([0.9, 0.9])
    assert benjamini_hochberg([]) == []
