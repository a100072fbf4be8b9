"""What a module imports, for the tests that keep imports flowing tournaments -> arena -> engine."""

from __future__ import annotations

import ast
from pathlib import Path


def imported_roots(path: Path) -> set[str]:
    """Return the top-level packages ``path`` imports (relative imports left out)."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def imported_modules(path: Path) -> set[str]:
    """Return every module ``path`` imports, at any depth of the file (relative imports left
    out); ``from a import b`` counts as ``a`` and ``a.b``, since ``b`` may be a module."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
    return modules


def forbidden_imports(path: Path, forbidden: set[str]) -> set[str]:
    """The modules ``path`` imports that are, or lie inside, one of ``forbidden``."""
    return {
        module
        for module in imported_modules(path)
        if any(module == f or module.startswith(f + ".") for f in forbidden)
    }


def task_sends(path: Path) -> list[int]:
    """Lines of ``path`` that send a Celery task themselves (``delay``, ``apply_async``,
    ``send_task``)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in {"delay", "apply_async", "send_task"}
    ]
