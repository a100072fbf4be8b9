"""The README stays a front door, and every relative link in the docs leads somewhere real."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 220
DOCS = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")])

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*([^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


@dataclass(frozen=True)
class Link:
    source: Path
    line: int
    target: str


def _prose_lines(path: Path) -> list[tuple[int, str]]:
    """The numbered lines of a markdown file outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor the headings of a markdown file define, repeats numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in _prose_lines(path):
        match = HEADING.match(line)
        if not match:
            continue
        slug = _slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def relative_links(path: Path) -> list[Link]:
    """The links of a markdown file that point inside the repository (no scheme)."""
    return [
        Link(path, number, target)
        for number, line in _prose_lines(path)
        for target in LINK.findall(line)
        if not SCHEME.match(target)
    ]


def broken(link: Link) -> str | None:
    """Why a relative link leads nowhere, or None when its file (and heading) exist."""
    file_part, _, anchor = link.target.partition("#")
    target = (link.source.parent / file_part).resolve() if file_part else link.source
    if not target.exists():
        return f"{file_part} does not exist"
    if not anchor:
        return None
    if target.suffix != ".md":
        return f"#{anchor} points into {file_part}, which has no headings"
    if anchor not in anchors(target):
        return f"{file_part or 'this file'} has no heading #{anchor}"
    return None


def test_the_readme_is_a_front_door_under_220_lines() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < README_MAX_LINES


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(doc) -> None:
    problems = [
        f"{link.source.relative_to(ROOT)}:{link.line}: {link.target}: {reason}"
        for link in relative_links(doc)
        if (reason := broken(link)) is not None
    ]
    assert problems == []


def test_the_readme_links_to_every_document_the_manual_moved_to() -> None:
    linked = {
        (ROOT / link.target.partition("#")[0]).resolve()
        for link in relative_links(ROOT / "README.md")
    }
    assert set(DOCS) - {ROOT / "README.md"} <= linked


def test_the_link_checker_finds_a_missing_file_and_a_missing_heading(tmp_path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Queues and workers\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[ok](other.md#queues-and-workers) [self](#page) [web](https://example.org/x)\n"
        "[gone](missing.md) [no heading](other.md#sizing)\n"
        "```\n[in code](nowhere.md)\n```\n"
    )
    reasons = {link.target: broken(link) for link in relative_links(page)}
    assert set(reasons) == {"other.md#queues-and-workers", "#page", "missing.md", "other.md#sizing"}
    assert reasons["other.md#queues-and-workers"] is None and reasons["#page"] is None
    assert reasons["missing.md"] == "missing.md does not exist"
    assert reasons["other.md#sizing"] is not None and "#sizing" in reasons["other.md#sizing"]


def test_headings_get_the_anchors_github_gives_them(tmp_path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Workers on several hosts (`bench/bench_hosts.py`)\n"
        "## Reference players' strength\n## Notes\n## Notes\n"
        "```sh\n# not a heading\n```\n"
    )
    assert anchors(page) == {
        "workers-on-several-hosts-benchbench_hostspy",
        "reference-players-strength",
        "notes",
        "notes-1",
    }
