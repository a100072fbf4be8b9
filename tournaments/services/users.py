"""Signing up and getting an API token."""

from __future__ import annotations

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from tournaments.errors import ApplicationError


def user_sign_up(*, username: str, password: str, email: str = "") -> tuple[AbstractBaseUser, str]:
    """Create an account and return it with its API token."""
    User = get_user_model()
    if User.objects.filter(username__iexact=username).exists():
        raise ApplicationError(
            "That username is taken.", code="conflict", status=409, field="username"
        )
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
        raise ApplicationError(
            "That username is taken.", code="conflict", status=409, field="username"
        ) from None
    return user, token.key


def user_token(*, user: AbstractBaseUser) -> str:
    """Return the user's API token, creating it on first use."""
    token, _ = Token.objects.get_or_create(user=user)
    return token.key
