"""Signing up and getting an API token."""

from __future__ import annotations

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from tournaments.errors import ApplicationError, ConflictError

USERNAME_MAX_LENGTH = 150
USERNAME_VALIDATOR = UnicodeUsernameValidator(message="Use letters, digits and @ . + - _ only.")


def _clean_username(username: str) -> str:
    if not username:
        raise ApplicationError("Choose a username.", field="username")
    if len(username) > USERNAME_MAX_LENGTH:
        raise ApplicationError(f"Use at most {USERNAME_MAX_LENGTH} characters.", field="username")
    try:
        USERNAME_VALIDATOR(username)
    except ValidationError as exc:
        raise ApplicationError(exc.messages[0], field="username") from None
    return username


def user_sign_up(*, username: str, password: str, email: str = "") -> tuple[User, str]:
    """Create an account and return it with its API token."""
    User = get_user_model()
    username = _clean_username(username)
    if User.objects.filter(username__iexact=username).exists():
        raise ConflictError("That username is taken.", field="username")
    candidate = User(username=username, email=email)
    try:
        password_validation.validate_password(password, user=candidate)
    except ValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), field="password") from None
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, email=email, password=password)
            token = Token.objects.create(user=user)
    except IntegrityError:
        raise ConflictError("That username is taken.", field="username") from None
    return user, token.key


def user_token(*, user: User) -> str:
    """Return the user's API token, creating it on first use."""
    token, _ = Token.objects.get_or_create(user=user)
    return token.key
