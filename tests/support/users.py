"""Users and API clients for tests; the fixed cast of fixtures in tests/conftest.py uses them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tournaments.models import ConfirmedEmail

PASSWORD = "a-long-test-passphrase-42"


def make_user(username: str, **extra: Any) -> User:
    """Create a user with the test password; ``extra`` sets other fields (is_staff, email).
    Its email address is not confirmed, so its bots stay off the ladders."""
    return User.objects.create_user(username=username, password=PASSWORD, **extra)


def confirm_email(user: User) -> User:
    """Mark the user's current address confirmed, as following the mailed link does."""
    ConfirmedEmail.objects.update_or_create(user=user, defaults={"email": user.email})
    return user


def make_confirmed_user(username: str, **extra: Any) -> User:
    """A user whose email address (``<username>@example.org`` unless given) is confirmed, so its
    bots may play on the ladders."""
    extra.setdefault("email", f"{username}@example.org")
    return confirm_email(make_user(username, **extra))


def client_for(user: User | None) -> APIClient:
    """An API client authenticated with the user's token, or anonymous for None."""
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def ladder_teams_apart(bots: Sequence) -> None:
    """Give each bot an owner of its own and list loopback as a shared host: a ladder seats one
    bot of a team at a table, and every test bot runs on 127.0.0.1 (bots verified by a worker
    store that address)."""
    from tournaments.models import SharedHost

    SharedHost.objects.get_or_create(address="127.0.0.1")
    for bot in bots:
        bot.owner = make_confirmed_user(f"owner-of-{bot.pk}")
        bot.save(update_fields=["owner"])
