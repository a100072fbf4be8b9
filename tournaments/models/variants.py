"""Game variants: the engine's presets and custom combinations of options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.functions import Lower

import engine

if TYPE_CHECKING:
    from tournaments.models.ratings import Rating

VARIANT_NAME_VALIDATOR = RegexValidator(
    r"^[a-z0-9][a-z0-9-]*$",
    "Use lower-case letters, digits and '-', starting with a letter or digit.",
)


class Variant(models.Model):
    """A named set of rules; ``options`` is the engine's ``Variant.to_dict()``."""

    name = models.CharField(max_length=64, validators=[VARIANT_NAME_VALIDATOR])
    base = models.CharField(max_length=64, blank=True, help_text="preset it was derived from")
    options = models.JSONField()
    is_preset = models.BooleanField(default=False)
    description = models.CharField(max_length=1000, blank=True)
    # TrueSkill parameters (tournaments.maths.ratings.RatingParams); empty means the defaults.
    rating_params = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="variants",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    # Not stored: the dashboard's selectors and views set these on the instances they show
    # (tournaments/selectors/dashboard.py, tournaments/dashboard/views.py).
    top_ratings: list[Rating]
    rules: dict[str, Any]
    note: str

    class Meta:
        ordering = ["-is_preset", "name"]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="variant_name_unique_ci"),
            models.CheckConstraint(
                condition=models.Q(is_preset=False) | models.Q(created_by__isnull=True),
                name="variant_preset_has_no_creator",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def to_engine(self) -> engine.Variant:
        """Return the engine's value for these rules."""
        return engine.Variant.from_dict(self.options)
