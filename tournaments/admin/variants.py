"""Variants in the admin: created with variant_create (the engine checks the rules), and only
their description and rating parameters changed afterwards (variant_update)."""

from __future__ import annotations

import copy
from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from engine import PRESETS
from tournaments.admin.common import ServiceAdmin, ServiceForm
from tournaments.models import Variant, signed_in
from tournaments.services.variants import variant_create, variant_update


class VariantAddForm(ServiceForm):
    base = forms.ChoiceField(choices=[(name, name) for name in sorted(PRESETS)])
    options = forms.JSONField(
        initial=dict,
        required=False,
        help_text='Overrides of the preset\'s options, e.g. {"must_trump": true} (docs/rules.md, '
        "section 3).",
    )

    class Meta:
        model = Variant
        fields = ["name", "base", "options", "description"]

    def save_through(self, data: dict[str, Any]) -> Variant:
        return variant_create(
            user=signed_in(self.request.user),
            name=data["name"],
            base=data["base"],
            options=data["options"] or {},
            description=data["description"],
        )


class VariantChangeForm(ServiceForm):
    class Meta:
        model = Variant
        fields = ["description", "rating_params"]

    def save_through(self, data: dict[str, Any]) -> Variant:
        return variant_update(
            variant=copy.copy(self.instance),
            description=data["description"],
            rating_params=data["rating_params"] or {},
        )


@admin.register(Variant)
class VariantAdmin(ServiceAdmin):
    list_display = ["name", "base", "is_preset", "created_by", "created_at", "tournament_count"]
    list_filter = ["is_preset", "base"]
    search_fields = ["name", "description"]
    list_select_related = ["created_by"]
    readonly_fields = ["created_at", "rules"]

    def get_readonly_fields(self, request: HttpRequest, obj: Variant | None = None) -> list[str]:
        if obj is None:
            return []
        return ["name", "base", "is_preset", "created_by", "options", *self.readonly_fields]

    def get_form(
        self, request: HttpRequest, obj: Variant | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        kwargs["form"] = VariantChangeForm if obj is not None else VariantAddForm
        return super().get_form(request, obj, change, **kwargs)

    def has_delete_permission(self, request: HttpRequest, obj: Variant | None = None) -> bool:
        return False  # its matches, tournaments and ladder keep it

    @admin.display(description="tournaments")
    def tournament_count(self, variant: Variant) -> int:
        return variant.tournaments.count()

    @admin.display(description="rules")
    def rules(self, variant: Variant) -> str:
        from tournaments.selectors.variants import variant_rules

        rules = variant_rules(variant=variant)
        return rules["problem"] or "\n".join(rules["rules"])
