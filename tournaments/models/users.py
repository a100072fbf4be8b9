"""Roles: organisers may create variants and tournaments, like staff."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

ORGANISERS_GROUP = "organisers"


def is_organiser(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Tell whether the user may organise: staff, or a member of the organisers group."""
    if not user.is_authenticated:
        return False
    return bool(user.is_staff or user.groups.filter(name=ORGANISERS_GROUP).exists())
