"""The engine stands alone: no Django, no arena, no app (imports flow app -> arena -> engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.layering import imported_roots

ENGINE = Path(__file__).resolve().parents[2] / "engine"


@pytest.mark.parametrize("path", sorted(ENGINE.rglob("*.py")), ids=lambda p: p.name)
def test_engine_modules_import_nothing_from_the_layers_above(path: Path) -> None:
    assert not imported_roots(path) & {"django", "rest_framework", "arena", "tournaments"}
