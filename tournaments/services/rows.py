"""Writing many rows back at once: the rating writer's (tournaments/services/rating_writer.py and
ratings.py) and a ladder's shares' (tournaments/services/shares.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from django.db import connection
from django.db.models import Field, Model

# Rows a statement writes at most.
CHUNK = 2000


def update_rows(model: type[Model], objects: Sequence[Model], columns: list[str]) -> None:
    """Write ``columns`` of ``objects`` back: one UPDATE ... FROM (VALUES ...) per chunk.

    Django's bulk_update builds a CASE WHEN per row and column in Python, which cost most of
    the time of rating a backlog; other databases keep it.
    """
    if not objects:
        return
    if connection.vendor != "postgresql":
        model._default_manager.bulk_update(objects, columns, batch_size=CHUNK)
        return
    meta = model._meta
    fields = [meta.pk, *(_concrete(model, c) for c in columns)]
    stored = [_stored_column(model, c) for c in ["pk", *columns]]
    names = [column.name for column in stored]
    casts = [column.cast for column in stored]
    row = "(" + ", ".join(f"%s::{cast}" for cast in casts) + ")"
    sets = ", ".join(f"{name} = v.{name}" for name in names[1:])
    for start in range(0, len(objects), CHUNK):
        chunk = objects[start : start + CHUNK]
        params = [
            field.get_db_prep_value(getattr(o, field.attname), connection)
            for o in chunk
            for field in fields
        ]
        sql = (
            f"UPDATE {meta.db_table} AS t SET {sets} FROM (VALUES {', '.join([row] * len(chunk))})"
            f" AS v({', '.join(names)}) WHERE t.{names[0]} = v.{names[0]}"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, params)


def _concrete(model: type[Model], name: str) -> Field:
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise TypeError(f"{model.__name__}.{name} is not a column")
    return field


class StoredColumn(NamedTuple):
    """A model field's column in the database and the type to cast a value to for it."""

    name: str
    cast: str


def _stored_column(model: type[Model], field_name: str) -> StoredColumn:
    field = model._meta.pk if field_name == "pk" else model._meta.get_field(field_name)
    cast = field.db_type(connection) if isinstance(field, Field) else None
    if not isinstance(field, Field) or field.column is None or cast is None:
        raise TypeError(f"{model.__name__}.{field_name} is not a column")
    return StoredColumn(field.column, cast)
