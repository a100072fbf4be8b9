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


def imported_modules(path: Path, package: str | None = None) -> set[str]:
    """Return every module ``path`` imports, at any depth of the file; ``from a import b``
    counts as ``a`` and ``a.b``, since ``b`` may be a module. Relative imports are resolved
    against ``package`` (the one ``path`` lies in), or left out without it."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, package)
            if module:
                modules.add(module)
                modules.update(f"{module}.{alias.name}" for alias in node.names)
    return modules


def _absolute(node: ast.ImportFrom, package: str | None) -> str | None:
    """The module a ``from ... import`` names, relative ones resolved inside ``package``."""
    if not node.level:
        return node.module
    if package is None:
        return None
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def forbidden_imports(path: Path, forbidden: set[str], package: str | None = None) -> set[str]:
    """The modules ``path`` imports that are, or lie inside, one of ``forbidden``."""
    return {
        module
        for module in imported_modules(path, package)
        if any(_inside(module, f) for f in forbidden)
    }


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


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


def write_calls(path: Path, methods: set[str]) -> list[int]:
    """Lines of ``path`` that call a method named in ``methods`` on anything (``row.save()``,
    ``Model.objects.create(...)``, ``super().save_model(...)``)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in methods
    ]
