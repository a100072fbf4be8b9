"""The collusion tests over running sums (tournaments/maths/collusion.py), without a database."""

from __future__ import annotations

import math

import pytest

from tests.support.collusion import Planted, season, true_chance
from tournaments.maths.collusion import (
    PairSums,
    Verdict,
    benjamini_hochberg,
    chi_square_tails,
    scan,
    totals_of,
)
from tournaments.maths.intervals import Finish

RING = Planted(beneficiary=24, partner=30, ring=tuple(range(31, 40)), seated=0.9)


def _scan(
    units: list[list[Finish]], bots: int, *, min_tables: int = 20, rate: float = 0.01
) -> Verdict:
    totals = totals_of(units, true_chance(bots))
    return scan(totals, min_tables=min_tables, min_repeat=3, false_discovery_rate=rate)


def _units(finishes: list[Finish]) -> list[list[Finish]]:
    return [[f] for f in finishes]


def test_a_planted_pair_is_flagged_with_the_beneficiary_and_partner_the_right_way_round() -> None:
    finishes = season(10, 1200, seed=3, planted=Planted(beneficiary=4, partner=2))
    found = _scan(_units(finishes), 10)
    flagged = [e for e in found.pairs if e.flagged]
    assert [(e.beneficiary, e.partner) for e in flagged] == [(4, 2)]
    top = flagged[0]
    together = [f for f in finishes if {2, 4} <= set(f.bots)]
    assert top.tables == len(together)
    assert top.beneficiary_with > top.beneficiary_without
    assert top.partner_with < top.partner_without
    assert top.lift > 0 and top.drop > 0 and top.z > 0
    assert top.adjusted_p <= 0.01
    assert top.p_value == pytest.approx(math.erfc(top.z / math.sqrt(2)))
    # The beneficiary is flagged as a bot too: its partner gave up results next to it.
    assert [e.bot for e in found.bots if e.flagged] == [4]


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_honest_fields_flag_no_pair_and_no_bot(seed) -> None:
    found = _scan(_units(season(10, 1200, seed=seed)), 10)
    assert len(found.pairs) == 45  # every pair met often enough to be tested
    assert len(found.bots) == 10
    assert not [e for e in found.pairs if e.flagged]
    assert not [e for e in found.bots if e.flagged]


@pytest.mark.parametrize("seed", [1, 3, 4])
def test_a_ring_of_ten_partners_each_too_rarely_at_its_tables_for_a_pair_is_flagged(seed) -> None:
    # 49 bots; the mid-field beneficiary's ten partners share 6 to 22 tables with it each.
    finishes = season(49, 1500, seed=seed, planted=RING)
    shared = [sum(1 for f in finishes if {24, p} <= set(f.bots)) for p in RING.partners]
    assert max(shared) < 30
    found = _scan(_units(finishes), 49)
    assert not [e for e in found.pairs if e.flagged]
    flagged = [e for e in found.bots if e.flagged]
    assert [e.bot for e in flagged] == [24]
    assert flagged[0].partners >= 10 and flagged[0].adjusted_p <= 0.01


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_honest_field_of_49_flags_no_bot(seed) -> None:
    found = _scan(_units(season(49, 1500, seed=seed)), 49)
    assert len(found.bots) == 49
    assert not [e for e in found.bots if e.flagged]


def test_an_honest_pair_of_a_strong_and_a_weak_bot_is_not_taken_for_a_sacrifice() -> None:
    # The weak bot finishes below the strong one at their tables, but not below the others
    # more than it does anyway: only results against the other bots count.
    found = _scan(_units(season(10, 3000, seed=9)), 10)
    strong_weak = next(e for e in found.pairs if {e.beneficiary, e.partner} == {0, 9})
    assert abs(strong_weak.z) < 3
    assert not strong_weak.flagged


def test_pairs_with_too_few_tables_together_or_apart_are_not_tested() -> None:
    finishes = season(6, 60, seed=1)
    together = {
        (a, b): sum(1 for f in finishes if {a, b} <= set(f.bots))
        for a in range(6)
        for b in range(a + 1, 6)
    }
    found = _scan(_units(finishes), 6, min_tables=40, rate=0.05)
    tested = {tuple(sorted((e.beneficiary, e.partner))) for e in found.pairs}
    assert tested == {pair for pair, n in together.items() if n >= 40}
    # Four bots always at the same table together are never apart: nothing to compare.
    always = [Finish(bots=(1, 2, 3, 4), places=(1, 2, 3, 4)) for _ in range(50)]
    assert _scan(_units(always), 6, min_tables=2, rate=0.05).pairs == []


def test_a_duplicate_group_counts_as_one_table() -> None:
    # Four rotations of one table, each finishing as the field would: one unit of four finishes.
    finishes = season(8, 800, seed=2)
    grouped = [
        [Finish(bots=f.bots, places=finishes[i + k].places) for k in range(4)]
        for i in range(0, 800, 4)
        for f in finishes[i : i + 1]
    ]
    shared = sum(1 for unit in grouped if {0, 1} <= set(unit[0].bots))
    found = _scan(grouped, 8, min_tables=2, rate=0.05)
    pair = next(e for e in found.pairs if {e.beneficiary, e.partner} == {0, 1})
    assert pair.tables == shared


def test_sums_added_unit_by_unit_equal_sums_of_the_whole_and_survive_their_stored_form() -> None:
    units = _units(season(8, 300, seed=6, planted=Planted(beneficiary=1, partner=2)))
    whole = totals_of(units, true_chance(8))
    halves = totals_of(units[:150], true_chance(8))
    for unit in units[150:]:
        halves.add(unit, true_chance(8))
    assert halves == whole
    for sums in whole.pairs.values():
        assert PairSums.from_list(sums.to_list()) == sums


def test_chi_square_tails_are_the_known_values() -> None:
    tails = chi_square_tails(3.841458820694124, 2)
    assert tails[0] == 0.0
    assert tails[1] == pytest.approx(0.05)
    assert tails[2] == pytest.approx(math.exp(-3.841458820694124 / 2))
    assert chi_square_tails(0.0, 3) == [1.0, 1.0, 1.0, 1.0]
    assert chi_square_tails(11.070497693516351, 5)[5] == pytest.approx(0.05)


def test_benjamini_hochberg_adjusts_as_the_step_up_rule() -> None:
    # m = 4: p * 4 / rank, then the running minimum from the largest down, capped at 1.
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.5]) == pytest.approx(
        [0.04, 0.0533333, 0.0533333, 0.5]
    )
    assert benjamini_hochberg([0.9, 0.8]) == pytest.approx([0.9, 0.9])
    assert benjamini_hochberg([]) == []
