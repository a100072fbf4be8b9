"""Creating variants: the engine decides what is playable, the database what is unique."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from engine import PRESET_NOTES, PRESETS, InvalidVariantError, preset
from engine import Variant as EngineVariant
from tournaments.errors import ApplicationError, ConflictError, PermissionDeniedError
from tournaments.maths.ratings import PRESET_RATING_PARAMS, RatingParams
from tournaments.models import Variant, is_organiser
from tournaments.models.variants import VARIANT_NAME_VALIDATOR


def _engine_variant(name: str, base: str, options: dict[str, Any]) -> EngineVariant:
    if "name" in options:
        raise ApplicationError(
            "The name is given at the top level, not among the options.", field="options.name"
        )
    try:
        return preset(base, **options).with_options(name=name)
    except InvalidVariantError as exc:
        field = "base" if exc.option == "preset" else f"options.{exc.option}"
        raise ApplicationError(
            f"Invalid option {exc.option!r}: {exc.reason}.",
            field=field,
            extra={"option": exc.option},
        ) from None
    except (TypeError, ValueError) as exc:
        raise ApplicationError(f"Invalid options: {exc}.", field="options") from None


def variant_create(
    *,
    user: User,
    name: str,
    base: str,
    options: dict[str, Any],
    description: str = "",
) -> Variant:
    """Create a custom variant from a preset and option overrides (staff or organisers)."""
    if not is_organiser(user):
        raise PermissionDeniedError("Only staff and organisers may create variants.")
    try:
        VARIANT_NAME_VALIDATOR(name)
    except ValidationError as exc:
        raise ApplicationError(exc.messages[0], field="name") from None
    engine_variant = _engine_variant(name, base, options)
    variant = Variant(
        name=name,
        base=base,
        options=engine_variant.to_dict(),
        description=description,
        created_by=user,
    )
    try:
        with transaction.atomic():
            variant.save()
    except IntegrityError:
        raise ConflictError(f"A variant named {name!r} already exists.", field="name") from None
    return variant


def variant_update(*, variant: Variant, description: str, rating_params: dict[str, Any]) -> Variant:
    """Change a variant's description or its TrueSkill parameters (staff); its rules are fixed,
    since its matches were played by them. New parameters count from the next rating written;
    a recompute applies them to every past match too."""
    try:
        RatingParams.from_dict(rating_params)
    except (TypeError, ValueError) as exc:
        raise ApplicationError(
            f"Invalid rating parameters: {exc}.", field="rating_params"
        ) from None
    variant.description, variant.rating_params = description, rating_params
    variant.save(update_fields=["description", "rating_params"])
    return variant


def variants_seed_presets() -> int:
    """Store the engine's presets, adding missing ones and refreshing changed ones; idempotent."""
    changed = 0
    for name, engine_variant in PRESETS.items():
        _, created = Variant.objects.update_or_create(
            name=name,
            defaults={
                "options": engine_variant.to_dict(),
                "base": name,
                "is_preset": True,
                "description": PRESET_NOTES.get(name, ""),
            },
            # Tuned by staff afterwards, so only set when the preset is first stored.
            create_defaults={
                "options": engine_variant.to_dict(),
                "base": name,
                "is_preset": True,
                "description": PRESET_NOTES.get(name, ""),
                "rating_params": PRESET_RATING_PARAMS.get(name, {}),
            },
        )
        changed += created
    return changed
