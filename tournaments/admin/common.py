"""What every area of the admin shares: read-only pages, forms that save through a service,
and actions that call one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from tournaments.errors import ApplicationError


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by the services: staff look, never edit."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """Rows shown with the row they belong to, written only by the services."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


Row = TypeVar("Row", bound=Model)


def apply_each(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    rows: QuerySet[Row],
    call: Callable[[Row], object],
    verb: str,
) -> None:
    """Call a service on each selected row, reporting what it refused instead of failing."""
    done = 0
    for row in rows:
        try:
            call(row)
            done += 1
        except ApplicationError as exc:
            model_admin.message_user(request, f"{row}: {exc.message}", level=messages.WARNING)
    if done:
        model_admin.message_user(request, f"{verb} {done} of {len(rows)}.")


class ServiceForm(forms.ModelForm):
    """A form whose row is written by a service while the form is checked, so a refusal shows
    as an error on the field it names (or on the form) and nothing is written.

    Subclasses implement ``save_through``; ``ServiceAdmin`` hands them the request.
    """

    request: HttpRequest

    def save_through(self, data: dict[str, Any]) -> Model:
        """Write the row with ``data`` through its service; return it."""
        raise NotImplementedError

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        try:
            with transaction.atomic():
                self.instance = self.save_through(data)
        except ApplicationError as exc:
            field = (exc.field or "").split(".")[0]  # "options.trump" is the options field
            self.add_error(field if field in self.fields else None, exc.message)
        except ValidationError as exc:  # a row's own checks (full_clean) inside the service
            for field, messages in exc.message_dict.items():
                self.add_error(field if field in self.fields else None, messages)
        return data


class ServiceAdmin(admin.ModelAdmin):
    """An admin whose add and change forms are ``ServiceForm``s: the service has saved the row
    by the time the admin would, so ``save_model`` has nothing left to do."""

    form: type[ServiceForm] = ServiceForm

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form = super().get_form(request, obj, change, **kwargs)
        form.request = request  # type: ignore[attr-defined]
        return form

    def save_model(self, request: HttpRequest, obj: Model, form: Any, change: bool) -> None:
        """Leave the row as the form's service wrote it."""

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        with transaction.atomic():
            response = super().changeform_view(request, object_id, form_url, extra_context)
            if request.method == "POST" and not isinstance(response, HttpResponseRedirect):
                # The page came back with errors after the service wrote: keep nothing.
                transaction.set_rollback(True)
        return response
