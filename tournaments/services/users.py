"""Accounts: signing up, API tokens, changing and resetting passwords.

An account's API token ends with its password: any change of the password deletes the token
(``TokenEndsWithPassword``), so a token copied by someone who knew the old password stops
working at once, and the token endpoint issues a new one to whoever signs in with the new one.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from tournaments import dispatch
from tournaments.dispatch import Task
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
    """Return the API token of a user just authenticated, creating it on first use.

    The user's row is locked and its password compared with the one authenticated, so a
    password changed meanwhile (whose change deletes the token) never leaves a token issued
    for the old password behind.
    """
    with transaction.atomic():
        current = get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        if current is None or current.password != user.password:
            raise ApplicationError("Wrong username or password.", code="authentication_failed")
        token, _ = Token.objects.get_or_create(user=user)
    return token.key


def user_revoke_token(*, user: User) -> bool:
    """Delete the user's API token; tell whether there was one."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted > 0


class TokenEndsWithPassword:
    """A password "validator" that refuses nothing; Django calls its ``password_changed`` after
    every saved password change (user.save() after set_password: this module's services, the
    reset form, the admin, ``manage.py changepassword``), so no way of changing a password
    leaves the old API token working. Listed in config/settings.py's AUTH_PASSWORD_VALIDATORS.
    Django does not call it for a hash upgraded at sign-in, which is no change of password.
    """

    def validate(self, password: str, user: User | None = None) -> None:
        """Accept every password: this entry only listens for changes."""

    def password_changed(self, password: str, user: User | None = None) -> None:
        """End the user's API token with the old password."""
        if user is not None and user.pk is not None:
            user_revoke_token(user=user)

    def get_help_text(self) -> str:
        """Say what a change does to the API token."""
        return "Changing the password revokes the account's API token."


def user_set_password(*, user: User, new_password: str, field: str = "new_password") -> None:
    """Give the user a new password; the old one's API token ends with it."""
    try:
        password_validation.validate_password(new_password, user=user)
    except ValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), field=field) from None
    user.set_password(new_password)
    user.save(update_fields=["password"])


def user_change_password(*, user: User, old_password: str, new_password: str) -> None:
    """Change the password of a user who knows the current one."""
    if not user.check_password(old_password):
        raise ApplicationError("That is not your current password.", field="old_password")
    if new_password == old_password:
        raise ApplicationError("Choose a new password, not the current one.", field="new_password")
    user_set_password(user=user, new_password=new_password)


def user_request_password_reset(*, email: str, domain: str, use_https: bool) -> None:
    """Have a reset link mailed to the accounts of ``email``, if there are any.

    The request does the same work whether an account has the address or not: the lookup and
    the mail happen on a worker, so neither the answer nor its timing tells who has an account.
    """
    dispatch.send(Task.SEND_PASSWORD_RESET, email, domain, "https" if use_https else "http")


def user_send_password_reset(*, email: str, domain: str, protocol: str) -> None:
    """Mail a reset link to each active account of ``email`` that has a password."""
    form = PasswordResetForm({"email": email})
    if not form.is_valid():
        return
    form.save(
        domain_override=domain,
        use_https=protocol == "https",
        subject_template_name="dashboard/password_reset_subject.txt",
        email_template_name="dashboard/password_reset_email.txt",
        from_email=settings.DEFAULT_FROM_EMAIL,
    )
