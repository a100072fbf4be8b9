"""What tournaments and always-on ladders share: table checks and status moves."""

from __future__ import annotations

from collections.abc import Collection
from typing import TypeVar

from engine.errors import InvalidVariantError
from tournaments.errors import ApplicationError, ConflictError
from tournaments.models import Ladder, Tournament, Variant

Competition = TypeVar("Competition", Tournament, Ladder)


def check_table(variant: Variant, table_size: int) -> None:
    """Refuse a table size the variant cannot be played at, naming ``table_size``."""
    try:
        variant.to_engine().check_players(table_size)
    except InvalidVariantError as exc:
        raise ApplicationError(exc.reason, field="table_size") from None


def competition_move(competition: Competition, allowed: Collection[str], to: str) -> Competition:
    """Lock the competition's row and move it to ``to`` from one of the ``allowed`` statuses."""
    locked = type(competition).objects.select_for_update().get(pk=competition.pk)
    if locked.status not in allowed:
        raise ConflictError(f"a {locked.status} {locked._meta.verbose_name} cannot become {to}")
    locked.status = to
    locked.save(update_fields=["status", "updated_at"])
    return locked
