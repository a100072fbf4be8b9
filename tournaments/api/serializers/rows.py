"""Outputs shaped whole from a selector's plain rows, each field given once, as a ``Column``.

The rating reads (``tournaments/selectors/ratings.py``) answer plain records, and each record
becomes its dict in one expression, as a hand-written ``to_representation`` would make it: no
field is built or called for a row. The same columns declare the fields that describe the rows
in the API's schema.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from enum import Enum
from functools import cached_property
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from tournaments.provisional import is_provisional


class Shown(Enum):
    """How a column shows the value it reads."""

    AS_IS = "as is"
    # ISO 8601 as DRF writes a time (UTC as "Z"), in the request's time zone.
    TIME = "time"
    # Whether a count of rated matches is still too few for a settled rating.
    PROVISIONAL = "provisional"


_EXPRESSIONS = {
    Shown.AS_IS: "row.{}",
    Shown.TIME: "self.times.to_representation(row.{})",
    Shown.PROVISIONAL: "is_provisional(row.{})",
}


@dataclass(frozen=True, slots=True)
class Column:
    """One field of a shaped output: its name, the field that describes it in the schema (None:
    the model's own field of that name), the row's attribute it reads (when not its name), and
    how it shows it."""

    name: str
    field: serializers.Field | None = None
    _: KW_ONLY
    attribute: str = ""
    shown: Shown = Shown.AS_IS

    def expression(self) -> str:
        """The Python expression of this column's value in a row called ``row``."""
        attribute = self.attribute or self.name
        if not attribute.isidentifier():
            raise ValueError(f"column {self.name!r}: {attribute!r} is not an attribute name")
        return _EXPRESSIONS[self.shown].format(attribute)


def shaper(columns: Sequence[Column]) -> Callable[[Any, Any], dict[str, Any]]:
    """A ``to_representation`` making a row's dict in one expression, as if written out by hand.

    It is compiled from the columns, as the standard library's dataclasses compile ``__init__``:
    going over the columns for every row instead costs about twice as much a row.
    """
    items = ", ".join(f"{column.name!r}: {column.expression()}" for column in columns)
    namespace: dict[str, Any] = {"is_provisional": is_provisional}
    exec(f"def to_representation(self, row):\n    return {{{items}}}\n", namespace)
    return namespace["to_representation"]


class ShapedRowsMetaclass(serializers.SerializerMetaclass):
    """Make an output's declared fields, its ``Meta.fields`` and its ``to_representation`` from
    its ``columns``."""

    def __new__(
        mcs, name: str, bases: tuple[type, ...], attrs: dict[str, Any]
    ) -> ShapedRowsMetaclass:
        columns: Sequence[Column] | None = attrs.get("columns")
        if columns is not None:
            meta = attrs.get("Meta")
            for column in columns:
                if column.field is not None:
                    attrs[column.name] = column.field
                elif meta is None:
                    raise TypeError(f"{name}.{column.name}: a field, or a Meta.model that has it")
            if meta is not None:
                meta.fields = [column.name for column in columns]
            attrs["to_representation"] = shaper(columns)
        made = super().__new__(mcs, name, bases, attrs)
        assert isinstance(made, ShapedRowsMetaclass)
        return made


# An output whose rows are shaped whole from a selector's plain records. (No docstring: the
# schema would take it as the description of every output using it.)
class ShapedRows(metaclass=ShapedRowsMetaclass):
    columns: Sequence[Column]

    @cached_property
    def times(self) -> serializers.DateTimeField:
        """DRF's rendering of a time (ISO 8601, UTC as "Z") in the time zone of this request,
        looked up once for all the rows rather than for every time shown."""
        return serializers.DateTimeField(default_timezone=timezone.get_current_timezone())
