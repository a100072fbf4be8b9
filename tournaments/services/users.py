"""Signing up and getting an API token."""

from __future__ import annotations

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from tournaments.errors import ApplicationError, ConflictError
from tournaments.models import UsernameKey
from tournaments.usernames import mixes_scripts, normalised, username_key

TAKEN = "That username is taken, or one that looks like it."
USERNAME_MAX_LENGTH = 150
USERNAME_VALIDATOR = UnicodeUsernameValidator(message="Use letters, digits and @ . + - _ only.")


def _clean_username(username: str) -> str:
    """The name as it is stored (NFKC), checked."""
    username = normalised(username)
    if not username:
        raise ApplicationError("Choose a username.", field="username")
    if len(username) > USERNAME_MAX_LENGTH:
        raise ApplicationError(f"Use at most {USERNAME_MAX_LENGTH} characters.", field="username")
    try:
        USERNAME_VALIDATOR(username)
    except ValidationError as exc:
        raise ApplicationError(exc.messages[0], field="username") from None
    return username


def _taken(username: str, key: str) -> bool:
    """Tell whether an account has this name (any case) or one that looks like it."""
    User = get_user_model()
    return (
        User.objects.filter(username__iexact=username).exists()
        or UsernameKey.objects.filter(key=key).exists()
    )


def user_sign_up(*, username: str, password: str, email: str = "") -> tuple[User, str]:
    """Create an account and return it with its API token.

    The name is stored in NFKC, and refused (409) when it looks like one already taken
    (tournaments/usernames.py); the unique key settles two sign-ups racing for it.
    """
    User = get_user_model()
    username = _clean_username(username)
    key = username_key(username)
    if _taken(username, key):
        raise ConflictError(TAKEN, field="username")
    if mixes_scripts(username):
        raise ApplicationError(
            "Use the letters of one script: this name mixes alphabets (Latin with Cyrillic or "
            "Greek, say), so it could pass for another.",
            field="username",
        )
    candidate = User(username=username, email=email)
    try:
        password_validation.validate_password(password, user=candidate)
    except ValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), field="password") from None
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, email=email, password=password)
            UsernameKey.objects.create(user=user, key=key)
            token = Token.objects.create(user=user)
    except IntegrityError:
        raise ConflictError(TAKEN, field="username") from None
    return user, token.key


def user_token(*, user: User) -> str:
    """Return the user's API token, creating it on first use."""
    token, _ = Token.objects.get_or_create(user=user)
    return token.key
