"""Input fields several resources share: strict about JSON types, and a variant by id or name."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from arena.timebank import DEFAULT_TIME_BANK_MS, MAX_TIME_BANK_MS
from tournaments.models import Variant
from tournaments.selectors.variants import variant_by_ref, variant_id_by_ref


class StrictCharField(serializers.CharField):
    """A string field that refuses numbers and booleans instead of converting them."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON true or false; strings and numbers are refused instead of guessed at."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictIntegerField(serializers.IntegerField):
    """An integer field that refuses strings, floats and booleans instead of converting them."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


TIME_BANK_HELP = (
    "each seat's time bank in every match, in ms: the time over time_limit_ms its decisions may "
    "draw on before a slow answer is a timeout (docs/bot-protocol.md, The time bank); 0 for none"
)


def time_bank_field() -> StrictIntegerField:
    """A competition's time bank as given when it is made: within bounds, the default if left
    out."""
    return StrictIntegerField(
        min_value=0,
        max_value=MAX_TIME_BANK_MS,
        default=DEFAULT_TIME_BANK_MS,
        help_text=TIME_BANK_HELP,
    )


class GivenEmptyIsInvalid:
    """A query value given empty is refused, where DRF would read it as left out."""

    def get_value(self, dictionary: Any) -> Any:
        if dictionary.get(self.field_name) == "":  # type: ignore[attr-defined]
            return ""
        return super().get_value(dictionary)  # type: ignore[misc]


class QueryDateTimeField(GivenEmptyIsInvalid, serializers.DateTimeField):
    """An instant in the query: ``?at=`` empty is an error, not "now"."""


@extend_schema_field(
    {"oneOf": [{"type": "integer"}, {"type": "string"}], "description": "variant id or name"}
)
class VariantRefField(GivenEmptyIsInvalid, serializers.Field):
    """A variant given by id or by name (case-insensitive): the variant, or with ``id_only``
    its id alone (all that reads filtering by variant need, and cheaper to look up)."""

    default_error_messages = {
        "invalid": "Give a variant id or name.",
        "unknown": "No variant {value!r}.",
    }

    def __init__(self, *, id_only: bool = False, **kwargs: Any) -> None:
        self.id_only = id_only
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Variant | int:
        if isinstance(data, bool) or not isinstance(data, int | str) or data == "":
            self.fail("invalid")
        variant = variant_id_by_ref(data) if self.id_only else variant_by_ref(data)
        if variant is None:
            self.fail("unknown", value=data)
        return variant

    def to_representation(self, value: Variant) -> str:
        return value.name
