"""Reading variants and their rules in words."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from engine import OPTIONS, InvalidVariantError
from tournaments.models import Variant


def variant_list() -> QuerySet[Variant]:
    """Presets first, then custom variants, by name."""
    return Variant.objects.select_related("created_by")


def variant_rules(*, variant: Variant) -> dict[str, Any]:
    """The variant's rules as the engine states them, with player range and option help."""
    try:
        engine_variant = variant.to_engine()
    except InvalidVariantError as exc:
        # Stored options the current engine no longer accepts: say so rather than fail.
        return {"valid": False, "problem": str(exc), "rules": [], "options_help": {}}
    return {
        "valid": True,
        "problem": "",
        "min_players": engine_variant.min_players,
        "max_players": engine_variant.max_players,
        "rules": engine_variant.describe(),
        "options_help": {name: spec["help"] for name, spec in OPTIONS.items()},
    }
