"""Shared hosts: addresses staff vouch host the bots of many people (tournaments/selectors/
teams.py keeps bots there apart by owner only)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from tournaments.errors import ApplicationError, ConflictError
from tournaments.models import SharedHost
from tournaments.services.ladders import ladders_top_up_soon


def shared_host_add(*, address: str, note: str = "", created_by: User) -> SharedHost:
    """List an address as a shared host; bots there that waited apart may now be seated."""
    host = SharedHost(address=address, note=note, created_by=created_by)
    try:
        host.full_clean(exclude=["created_by"], validate_unique=False)
    except ValidationError as exc:
        field, messages = next(iter(exc.message_dict.items()))
        raise ApplicationError(messages[0], field=field) from None
    try:
        with transaction.atomic():
            host.save()
    except IntegrityError:
        raise ConflictError(f"{host.address} is already listed.", field="address") from None
    ladders_top_up_soon()
    return host


def shared_host_update(*, host: SharedHost, note: str) -> SharedHost:
    """Change what the listing says about the address (the address itself is added anew)."""
    host.note = note
    host.save(update_fields=["note"])
    return host


def shared_host_remove(*, host: SharedHost) -> None:
    """Take an address off the list: its bots are one team by address again from the next
    table on."""
    host.delete()
