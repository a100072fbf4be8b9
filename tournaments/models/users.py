"""Roles: organisers may create variants and tournaments, like staff; and usernames' keys."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import models

ORGANISERS_GROUP = "organisers"


class UsernameKey(models.Model):
    """What an account's username shares with every name that looks like it
    (tournaments/usernames.py): unique, so the database refuses a lookalike even when two
    sign-ups race."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="username_key",
    )
    # NULL only for an account that already shared its key with an older one when keys were
    # introduced (migration 0022): both accounts were kept, and the older one holds the key.
    key = models.CharField(max_length=64, unique=True, null=True)

    def __str__(self) -> str:
        return f"username key of user {self.user_id}"


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


def sees_bot_privately(user: User | AnonymousUser, owner_id: int) -> bool:
    """Tell whether the user may see a bot's private details (its endpoint, and the text of its
    faults, health checks and disabling, which can name its host, port and path): its owner and
    staff may; everyone else sees the kind of fault only."""
    if isinstance(user, AnonymousUser):
        return False
    return bool(user.is_staff or user.pk == owner_id)


def sees_platform_errors(user: User | AnonymousUser) -> bool:
    """Tell whether the user may read the platform's own error texts (a match's last error,
    which can quote stored values or name the database's or a worker's host): staff only;
    everyone else sees that the match failed from its status."""
    if isinstance(user, AnonymousUser):
        return False
    return bool(user.is_staff)
