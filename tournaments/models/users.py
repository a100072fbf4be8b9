"""Roles: organisers may create variants and tournaments, like staff; usernames' keys; and
confirmed email addresses, which the ladders ask of an account before seating its bots."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from tournaments.mailboxes import mailbox_key

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


class ConfirmedEmail(models.Model):
    """The address an account proved it reads, by following the link mailed to it.

    The account counts as confirmed while its email is still this address
    (``email_confirmed_q``): changing the email anywhere (the pages, the API, the admin) leaves
    it unconfirmed until the new address is confirmed. One mailbox confirms one account at a
    time, however its address is written (``mailbox``, tournaments/mailboxes.py): the unique
    index settles two confirmations racing for it.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="confirmed_email",
    )
    email = models.EmailField(max_length=254)
    # mailbox_key(email), kept by save(): what two spellings of one mailbox share.
    mailbox = models.CharField(max_length=254)
    confirmed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["mailbox"], name="confirmed_email_one_mailbox"),
        ]

    def __str__(self) -> str:
        return f"confirmed email of user {self.user_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save the row with the mailbox of its address."""
        self.mailbox = mailbox_key(self.email)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "email" in update_fields:
            kwargs["update_fields"] = {*update_fields, "mailbox"}
        super().save(*args, **kwargs)


def email_confirmed_q(path: str = "") -> Q:
    """Rows whose account (at ``path``, e.g. ``"owner__"``; none for users) has confirmed the
    email address it has now: the one rule the ladders and the pages read."""
    return Q(**{f"{path}confirmed_email__email": F(f"{path}email")})


def is_email_confirmed(user: User | AnonymousUser) -> bool:
    """Tell whether the account has confirmed its current email address (``email_confirmed_q``
    for one account in hand)."""
    if isinstance(user, AnonymousUser) or not user.email:
        return False
    try:
        return bool(user.confirmed_email.email == user.email)
    except ConfirmedEmail.DoesNotExist:
        return False


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
