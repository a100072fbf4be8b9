"""The arena never reaches up into Django or the tournaments app."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.layering import imported_roots

ARENA = Path(__file__).resolve().parents[2] / "arena"


@pytest.mark.parametrize("path", sorted(ARENA.rglob("*.py")), ids=lambda p: p.name)
def test_arena_modules_import_neither_django_nor_tournaments(path: Path) -> None:
    assert not imported_roots(path) & {"django", "rest_framework", "tournaments"}
