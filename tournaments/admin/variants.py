"""Variants in the admin."""

from __future__ import annotations

from django.contrib import admin

from tournaments.models import Variant


@admin.register(Variant)
class VariantAdmin(admin.ModelAdmin):
    list_display = ["name", "base", "is_preset", "created_by", "created_at", "tournament_count"]
    list_filter = ["is_preset", "base"]
    search_fields = ["name", "description"]
    list_select_related = ["created_by"]
    readonly_fields = ["created_at", "rules"]
    raw_id_fields = ["created_by"]

    @admin.display(description="tournaments")
    def tournament_count(self, variant: Variant) -> int:
        return variant.tournaments.count()

    @admin.display(description="rules")
    def rules(self, variant: Variant) -> str:
        from tournaments.selectors.variants import variant_rules

        rules = variant_rules(variant=variant)
        return rules["problem"] or "\n".join(rules["rules"])
