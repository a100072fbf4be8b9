"""Reads about accounts."""

from __future__ import annotations

from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token


def user_api_token(*, user: User) -> Token | None:
    """The user's API token, if they have one now."""
    return Token.objects.filter(user=user).first()
