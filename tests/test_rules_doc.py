"""docs/rules.md has every section the code cites, and its tables say what the engine does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.presets import PRESETS
from engine.variant import OPTIONS

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules.md"
CITING = ("engine", "arena", "tournaments", "tests", "config", "bench", "docs")
# "docs/rules.md section 4", "docs/rules.md 3.7, 3.8", "docs/rules.md 1, 3.1, 3.3, 3.4"
CITATION = re.compile(r"docs/rules\.md,? (?:sections? )?((?:\d+(?:\.\d+)?(?:, )?)+)")


def _headings() -> set[str]:
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", RULES.read_text(), re.M))


def _citations() -> list[tuple[str, str]]:
    found = []
    for top in CITING:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in (".py", ".md", ".html") or ".venv" in path.parts:
                continue
            for match in CITATION.finditer(path.read_text(encoding="utf-8")):
                for section in re.findall(r"\d+(?:\.\d+)?", match.group(1)):
                    found.append((str(path.relative_to(ROOT)), section))
    return found


def test_the_code_cites_the_rules_by_section() -> None:
    assert len(_citations()) >= 10


@pytest.mark.parametrize(("where", "section"), _citations())
def test_every_cited_section_of_the_rules_exists(where: str, section: str) -> None:
    assert section in _headings(), f"{where} cites docs/rules.md {section}"


def test_the_rules_name_every_option_and_every_preset() -> None:
    text = RULES.read_text()
    for name in [*OPTIONS, *PRESETS]:
        assert f"`{name}`" in text, name


def _schedule_rows() -> dict[tuple[str, int], tuple[str, str]]:
    """(preset, players) -> (deals, hand sizes) as the hand-size table of section 2 has them."""
    text = RULES.read_text()
    table = text[text.index("| preset | players | deals | hand sizes |") :].split("\n\n")[0]
    rows: dict[tuple[str, int], tuple[str, str]] = {}
    names: list[str] = []
    deals = ""
    for line in table.splitlines()[2:]:
        preset_cell, players_cell, deals_cell, sizes = (
            c.strip() for c in line.strip("|").split("|")
        )
        names = re.findall(r"`([a-z-]+)`", preset_cell) or names
        deals = deals_cell or deals
        low, _, high = players_cell.partition("-")
        counts = range(int(low), int(high) + 1) if high else map(int, players_cell.split(","))
        for players in counts:
            for name in names:
                rows[name, players] = (deals, sizes)
    return rows


def _expand(sizes: str) -> list[int]:
    """ "1 2 3 ... 6" -> 1..6; words after the numbers (remarks) are dropped."""
    out: list[int] = []
    tokens = sizes.split(" (")[0].split()
    for i, token in enumerate(tokens):
        if token == "...":
            step = 1 if int(tokens[i + 1]) > out[-1] else -1
            out += range(out[-1] + step, int(tokens[i + 1]), step)
        else:
            out.append(int(token))
    return out


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_rules_list_the_hand_sizes_of_every_preset(name: str) -> None:
    rows = _schedule_rows()
    variant = PRESETS[name]
    for players in range(variant.min_players, variant.max_players + 1):
        deals, sizes = rows[name, players]
        schedule = variant.schedule(players)
        if variant.target_score is None:
            assert (int(deals), _expand(sizes)) == (len(schedule), list(schedule)), players
        else:
            assert sizes.startswith(f"{variant.largest_hand(players)} every deal"), players
            assert set(schedule) == {variant.largest_hand(players)}
