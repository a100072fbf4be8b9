"""The arena never reaches up into Django or the tournaments app."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parents[2] / "arena"


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("path", sorted(ARENA.rglob("*.py")), ids=lambda p: p.name)
def test_arena_modules_import_neither_django_nor_tournaments(path: Path) -> None:
    assert not imported_roots(path) & {"django", "rest_framework", "tournaments"}
