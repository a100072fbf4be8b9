"""The tournaments app's own layers: services never import tasks, selectors never import
services, every task is sent from tournaments/dispatch.py, the maths stand alone, and the admin
writes only through the services."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import User
from django.db.models import Model
from django.http import HttpRequest
from django.test import RequestFactory

from tests.support.layering import forbidden_imports, task_sends, write_calls
from tournaments.admin.common import ServiceAdmin, ServiceForm
from tournaments.models import SharedHost

APP = Path(__file__).resolve().parents[2] / "tournaments"
SERVICES = sorted((APP / "services").glob("*.py"))
SELECTORS = sorted((APP / "selectors").glob("*.py"))
DISPATCH = APP / "dispatch.py"
MATHS = sorted((APP / "maths").glob("*.py"))
# What only the dispatch module may know: the task entry points and the Celery app.
TASK_MODULES = {"tournaments.tasks", "config.celery_app", "celery"}
# What the maths may not lean on: Django, the app around them, its settings and workers.
ABOVE_THE_MATHS = {"django", "rest_framework", "celery", "config", "tournaments"}
ADMIN = sorted((APP / "admin").glob("*.py"))
# The calls that write rows, and the admin's own default writes a module could call up to.
WRITES = {
    "save",
    "delete",
    "create",
    "update",
    "bulk_create",
    "bulk_update",
    "get_or_create",
    "update_or_create",
    "save_model",
    "delete_model",
    "delete_queryset",
    "save_related",
    "save_formset",
}


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


@pytest.mark.parametrize("path", ADMIN, ids=_ids)
def test_the_admin_saves_no_row_itself(path: Path) -> None:
    assert write_calls(path, WRITES) == []


def _staff_request() -> HttpRequest:
    request = RequestFactory().get("/admin/")
    request.user = User(username="checker", is_staff=True, is_superuser=True, is_active=True)
    return request


def _writes_around_the_services(model_admin: admin.ModelAdmin, request: HttpRequest) -> list[str]:
    """What ``model_admin`` would write with Django's default saves instead of a service."""
    found = []
    model = model_admin.model
    if model_admin.has_add_permission(request) and not _saves_through(model_admin, request, None):
        found.append("add")
    if model_admin.has_change_permission(request) and not _saves_through(
        model_admin, request, model()
    ):
        found.append("change")
    if model_admin.has_delete_permission(request) and (
        type(model_admin).delete_model is admin.ModelAdmin.delete_model
        or type(model_admin).delete_queryset is admin.ModelAdmin.delete_queryset
    ):
        found.append("delete")
    if model_admin.list_editable:  # the list page would save these with the defaults
        found.append("list_editable")
    for inline_class in model_admin.inlines:
        inline = inline_class(model, model_admin.admin_site)
        for permission in ("add", "change", "delete"):
            if getattr(inline, f"has_{permission}_permission")(request, None):
                found.append(f"{permission} {inline.model.__name__} inline")
    return found


def _saves_through(model_admin: admin.ModelAdmin, request: HttpRequest, obj: Model | None) -> bool:
    form = model_admin.get_form(request, obj, change=obj is not None)
    return isinstance(model_admin, ServiceAdmin) and issubclass(form, ServiceForm)


@pytest.mark.parametrize(
    "model", list(apps.get_app_config("tournaments").get_models()), ids=lambda m: m.__name__
)
def test_the_admin_writes_every_row_through_a_service(model: type[Model]) -> None:
    if admin.site.is_registered(model):
        model_admin = admin.site.get_model_admin(model)
        assert _writes_around_the_services(model_admin, _staff_request()) == []


def test_the_check_finds_an_admin_saving_with_the_defaults() -> None:
    class Plain(admin.ModelAdmin):
        list_display = ["address", "note"]
        list_editable = ["note"]

    found = _writes_around_the_services(Plain(SharedHost, admin.AdminSite()), _staff_request())
    assert found == ["add", "change", "delete", "list_editable"]


def test_the_check_finds_a_row_saved_by_hand(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        "def save_model(self, request, obj, form, change):\n"
        "    obj.save()\n"
        "    super().save_model(request, obj, form, change)\n"
        "    Bot.objects.filter(pk=1).update(status='active')\n"
    )
    assert write_calls(module, WRITES) == [2, 3, 4]
