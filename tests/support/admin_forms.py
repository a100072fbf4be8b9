"""The admin's forms as a browser posts them, for tests that drive the admin with Django's
test client."""

from __future__ import annotations

from typing import Any

from django.db.models import Model
from django.test import Client
from django.urls import reverse


def admin_url(model: type[Model] | Model, view: str, *args: object) -> str:
    """The admin's ``view`` page (add, change, changelist, delete) of ``model``."""
    return reverse(f"admin:tournaments_{model._meta.model_name}_{view}", args=args)


def _form_data(page: Any) -> dict[str, Any]:
    data: dict[str, Any] = {}
    form = page.context["adminform"].form
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        value = value() if callable(value) else value  # a default such as a fresh seed
        data[name] = "" if value is None else value
    for inline in page.context["inline_admin_formsets"]:
        management = inline.formset.management_form
        for name in management.fields:
            data[f"{management.prefix}-{name}"] = management.initial.get(name, 0)
    return data


def change_form_data(client: Client, row: Model, **changes: Any) -> dict[str, Any]:
    """A row's change form as the page shows it, with ``changes`` typed in; a False value
    leaves a checkbox unticked, as a browser leaves it out."""
    data = {**_form_data(client.get(admin_url(row, "change", row.pk))), **changes}
    return {name: value for name, value in data.items() if value is not False}


def add_form_data(client: Client, model: type[Model], **typed: Any) -> dict[str, Any]:
    """A model's empty add form with ``typed`` filled in."""
    data = {**_form_data(client.get(admin_url(model, "add"))), **typed}
    return {name: value for name, value in data.items() if value is not False}


def form_errors(response: Any) -> dict[str, list[str]]:
    """The errors the admin's form page shows, by field ("__all__" for the form's own)."""
    return {k: list(v) for k, v in response.context["adminform"].form.errors.items()}
