"""Roles: organisers may create variants and tournaments, like staff."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied

ORGANISERS_GROUP = "organisers"


def is_organiser(user: User | AnonymousUser) -> bool:
    """Tell whether the user may organise: staff, or a member of the organisers group."""
    if isinstance(user, AnonymousUser):
        return False
    return bool(user.is_staff or user.groups.filter(name=ORGANISERS_GROUP).exists())


def signed_in(user: User | AnonymousUser) -> User:
    """The account behind a request that must be signed in; anonymous is refused (403)."""
    if isinstance(user, AnonymousUser):
        raise PermissionDenied("Sign in first.")
    return user
