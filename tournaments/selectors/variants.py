"""Reading variants and their rules in words."""

from __future__ import annotations

from typing import Any, NamedTuple

from django.db import connection
from django.db.models import QuerySet

from engine import OPTIONS, InvalidVariantError
from tournaments.models import Variant

# The largest id a row can have (PostgreSQL's bigint).
MAX_ID = 2**63 - 1


def variant_list() -> QuerySet[Variant]:
    """Presets first, then custom variants, by name."""
    return Variant.objects.select_related("created_by")


class VariantCondition(NamedTuple):
    """The SQL condition on a variant's row that a reference names, and its one parameter."""

    sql: str
    value: int | str


def _condition(ref: int | str) -> VariantCondition | None:
    """A variant by id, or by name (case-insensitive); None when no variant can match."""
    if isinstance(ref, str) and (len(ref) > 64 or "\x00" in ref):
        return None
    if isinstance(ref, int) or (ref.isascii() and ref.isdecimal()):
        number = int(ref)
        return VariantCondition("id = %s", number) if 0 < number <= MAX_ID else None
    return VariantCondition("UPPER(name) = UPPER(%s)", ref)


# The rating endpoints look a variant up on every request: one statement of SQL costs about a
# third of the CPU of the ORM's query for it, and a tenth when only the id is read.


def variant_by_ref(ref: int | str) -> Variant | None:
    """Find a variant by id or by name (case-insensitive); None when there is none."""
    condition = _condition(ref)
    if condition is None:
        return None
    table = Variant._meta.db_table
    found = Variant.objects.raw(f"SELECT * FROM {table} WHERE {condition.sql}", [condition.value])
    return next(iter(found), None)


def variant_id_by_ref(ref: int | str) -> int | None:
    """The id of ``variant_by_ref(ref)``, all that the reads filtering by variant need."""
    condition = _condition(ref)
    if condition is None:
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {Variant._meta.db_table} WHERE {condition.sql}", [condition.value]
        )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


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
