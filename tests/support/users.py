"""Users and API clients for tests; the fixed cast of fixtures in tests/conftest.py uses them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

PASSWORD = "a-long-test-passphrase-42"


def make_user(username: str, **extra: Any) -> User:
    """Create a user with the test password; ``extra`` sets other fields (is_staff, email)."""
    return User.objects.create_user(username=username, password=PASSWORD, **extra)


def client_for(user: User | None) -> APIClient:
    """An API client authenticated with the user's token, or anonymous for None."""
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client
