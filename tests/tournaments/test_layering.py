"""The tournaments app's own layers: services never import tasks, selectors never import
services, every task is sent from tournaments/dispatch.py, and the maths stand alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.layering import forbidden_imports, task_sends

APP = Path(__file__).resolve().parents[2] / "tournaments"
SERVICES = sorted((APP / "services").glob("*.py"))
SELECTORS = sorted((APP / "selectors").glob("*.py"))
DISPATCH = APP / "dispatch.py"
MATHS = sorted((APP / "maths").glob("*.py"))
# What only the dispatch module may know: the task entry points and the Celery app.
TASK_MODULES = {"tournaments.tasks", "config.celery_app", "celery"}
# What the maths may not lean on: Django, the app around them, its settings and workers.
ABOVE_THE_MATHS = {"django", "rest_framework", "celery", "config", "tournaments"}


def _ids(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("path", SERVICES, ids=_ids)
def test_services_import_neither_tasks_nor_the_celery_app(path: Path) -> None:
    assert forbidden_imports(path, TASK_MODULES) == set()


@pytest.mark.parametrize("path", SELECTORS, ids=_ids)
def test_selectors_never_import_services(path: Path) -> None:
    assert forbidden_imports(path, {"tournaments.services"}) == set()


def maths_leaning_on_the_app(path: Path) -> set[str]:
    """What a module of tournaments/maths/ imports from Django or the app outside the maths."""
    return {
        module
        for module in forbidden_imports(path, ABOVE_THE_MATHS, package="tournaments.maths")
        if module != "tournaments.maths" and not module.startswith("tournaments.maths.")
    }


@pytest.mark.parametrize("path", MATHS, ids=_ids)
def test_the_maths_import_neither_django_nor_the_rest_of_the_app(path: Path) -> None:
    assert maths_leaning_on_the_app(path) == set()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from django.conf import settings\n", {"django.conf", "django.conf.settings"}),
        (
            "if TYPE_CHECKING:\n    from django.db.models import F\n",
            {"django.db.models", "django.db.models.F"},
        ),
        ("from ..models import Rating\n", {"tournaments.models", "tournaments.models.Rating"}),
        ("import tournaments.selectors.ratings\n", {"tournaments.selectors.ratings"}),
        ("from tournaments.maths.intervals import Finish\nfrom .ratings import rate\n", set()),
        ("import numpy\nimport trueskill\n", set()),
    ],
)
def test_the_maths_check_finds_what_leans_on_the_app(
    tmp_path: Path, source: str, expected: set[str]
) -> None:
    module = tmp_path / "module.py"
    module.write_text(source)
    assert maths_leaning_on_the_app(module) == expected


@pytest.mark.parametrize("path", [p for p in sorted(APP.rglob("*.py")) if p != DISPATCH], ids=_ids)
def test_only_the_dispatch_module_sends_tasks(path: Path) -> None:
    assert task_sends(path) == []
    if path.name != "tasks.py":
        assert forbidden_imports(path, {"tournaments.tasks"}) == set()


@pytest.mark.parametrize(
    ("source", "forbidden", "expected"),
    [
        (
            "def f():\n    from tournaments.tasks import run_match\n",
            TASK_MODULES,
            {"tournaments.tasks", "tournaments.tasks.run_match"},
        ),
        ("from tournaments import tasks\n", TASK_MODULES, {"tournaments.tasks"}),
        ("import config.celery_app\n", TASK_MODULES, {"config.celery_app"}),
        (
            "from tournaments.services.ratings import x\n",
            {"tournaments.services"},
            {"tournaments.services.ratings", "tournaments.services.ratings.x"},
        ),
        ("from tournaments.tasksets import x\n", TASK_MODULES, set()),
    ],
)
def test_the_check_finds_a_forbidden_import_wherever_it_is_written(
    tmp_path: Path, source: str, forbidden: set[str], expected: set[str]
) -> None:
    module = tmp_path / "module.py"
    module.write_text(source)
    assert forbidden_imports(module, forbidden) == expected


def test_the_check_finds_a_task_sent_by_hand(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("def f(task):\n    task.delay(1)\n    task.apply_async((1,))\n")
    assert task_sends(module) == [2, 3]
