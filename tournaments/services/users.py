"""Accounts: signing up, API tokens, changing and resetting passwords, confirming the email
address.

An account's API token ends with its password: any change of the password deletes the token
(``TokenEndsWithPassword``), so a token copied by someone who knew the old password stops
working at once, and the token endpoint issues a new one to whoever signs in with the new one.

An account confirms its email address by following a link mailed to it (a worker sends it): the
link carries the account and the address, signed with SECRET_KEY (django.core.signing), and
works for ``EMAIL_CONFIRMATION_SECONDS``. It confirms only the address the account still has,
and one mailbox, however its address is written, confirms one account at a time
(``ConfirmedEmail``, tournaments/mailboxes.py). The ladders seat the bots
of confirmed accounts only (tournaments/services/ladders.py).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core import signing
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import F
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from rest_framework.authtoken.models import Token

from tournaments import dispatch
from tournaments.cache_keys import password_reset_mails_key
from tournaments.dispatch import Task
from tournaments.errors import ApplicationError, ConflictError
from tournaments.mailboxes import mailbox_key
from tournaments.models import Bot, ConfirmedEmail, UsernameKey, is_email_confirmed
from tournaments.services.shares import shares_seat
from tournaments.usernames import mixes_scripts, normalised, username_key

TAKEN = "That username is taken, or one that looks like it."
USERNAME_MAX_LENGTH = 150
USERNAME_VALIDATOR = UnicodeUsernameValidator(message="Use letters, digits and @ . + - _ only.")
CONFIRMATION_SALT = "tournaments.email-confirmation"
ASK_AGAIN = "ask for a new one on your account page"
# The window PASSWORD_RESET_MAILS_PER_HOUR counts reset mails to one mailbox in.
RESET_MAIL_WINDOW_SECONDS = 3600

logger = logging.getLogger(__name__)


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


def _clean_email(email: str) -> str:
    """The address as it is stored (its domain in lower case), checked; empty for none."""
    email = get_user_model().objects.normalize_email(email.strip())
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise ApplicationError("Enter a valid email address.", field="email") from None
    return email


def user_sign_up(
    *, username: str, password: str, email: str = "", domain: str, use_https: bool
) -> tuple[User, str]:
    """Create an account and return it with its API token; with an email address, a link to
    confirm it is mailed (links point at ``domain``).

    The name is stored in NFKC, and refused (409) when it looks like one already taken
    (tournaments/usernames.py); the unique key settles two sign-ups racing for it.
    """
    User = get_user_model()
    email = _clean_email(email)
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
    if email:
        _send_confirmation_soon(user, domain, use_https)
    return user, token.key


def _send_confirmation_soon(user: User, domain: str, use_https: bool) -> None:
    dispatch.send(Task.SEND_EMAIL_CONFIRMATION, user.pk, domain, "https" if use_https else "http")


def user_request_email_confirmation(*, user: User, domain: str, use_https: bool) -> None:
    """Have a new confirmation link mailed to the account's address (by a worker).

    Refused when the account has no address (400) or has confirmed it already (409).
    """
    if not user.email:
        raise ApplicationError("Add an email address to your account first.", field="email")
    if is_email_confirmed(user):
        raise ConflictError("Your email address is confirmed already.", field="email")
    _send_confirmation_soon(user, domain, use_https)


def user_change_email(
    *, user: User, email: str, password: str, domain: str, use_https: bool
) -> User:
    """Give the account a new email address, given its password; the new one is unconfirmed
    until its mailed link is followed (an empty one removes the address). The same address
    again changes nothing."""
    if not user.check_password(password):
        raise ApplicationError("That is not your current password.", field="password")
    email = _clean_email(email)
    if email == user.email:
        return user
    with transaction.atomic():
        user.email = email
        user.save(update_fields=["email"])
        # The old address is free to confirm another account.
        ConfirmedEmail.objects.filter(user=user).delete()
    if email:
        _send_confirmation_soon(user, domain, use_https)
    return user


def email_confirmation_key(user: User) -> str:
    """The key of the link that confirms the account's current address."""
    return signing.dumps({"user": user.pk, "email": user.email}, salt=CONFIRMATION_SALT)


def user_send_email_confirmation(*, user_id: int, domain: str, protocol: str) -> None:
    """Mail a confirmation link to the account's current address; nothing when the account is
    gone or inactive, has no address, or has confirmed it meanwhile."""
    user = (
        get_user_model()
        .objects.filter(pk=user_id, is_active=True)
        .select_related("confirmed_email")
        .first()
    )
    if user is None or not user.email or is_email_confirmed(user):
        return
    path = reverse("dashboard:confirm-email", args=[email_confirmation_key(user)])
    context = {
        "user": user,
        "domain": domain,
        "link": f"{protocol}://{domain}{path}",
        "days": settings.EMAIL_CONFIRMATION_SECONDS // 86400,
        "hours": settings.EMAIL_CONFIRMATION_SECONDS // 3600,
    }
    subject = render_to_string("dashboard/email_confirmation_subject.txt", context)
    send_mail(
        " ".join(subject.split()),
        render_to_string("dashboard/email_confirmation_email.txt", context),
        settings.DEFAULT_FROM_EMAIL,
        [user.email],
    )


def _confirm(user: User) -> None:
    """Record the user's current address confirmed; 409 when its mailbox, however written,
    confirms another account (tournaments/mailboxes.py)."""
    # A mailbox whose account has moved on to another address is free again.
    mailbox = mailbox_key(user.email)
    ConfirmedEmail.objects.filter(mailbox=mailbox).exclude(user__email=F("email")).delete()
    try:
        with transaction.atomic():
            ConfirmedEmail.objects.update_or_create(
                user=user, defaults={"email": user.email, "confirmed_at": timezone.now()}
            )
    except IntegrityError:
        raise ConflictError(
            "That mailbox confirms another account already, under this or another spelling of "
            "its address: one mailbox confirms one account.",
            field="email",
        ) from None
    shares_seat(Bot.objects.filter(owner=user, ladder_opt_in=True).values_list("pk", flat=True))


def user_confirm_email(*, key: str) -> User:
    """Confirm the address a mailed link was sent to; return its account.

    The link must be this site's, not older than ``EMAIL_CONFIRMATION_SECONDS``, and name the
    address the account has now (400 naming ``key`` otherwise). Following it twice is harmless.
    """
    try:
        payload = signing.loads(
            key, salt=CONFIRMATION_SALT, max_age=settings.EMAIL_CONFIRMATION_SECONDS
        )
    except signing.SignatureExpired:
        raise ApplicationError(
            f"This confirmation link has expired: {ASK_AGAIN}.", field="key", code="expired"
        ) from None
    except signing.BadSignature:
        raise ApplicationError(
            f"This is not a confirmation link of this site: {ASK_AGAIN}.", field="key"
        ) from None
    with transaction.atomic():
        user = (
            get_user_model()
            .objects.select_for_update()
            .filter(pk=payload["user"], is_active=True)
            .first()
        )
        if user is None or not user.email or user.email != payload["email"]:
            raise ApplicationError(
                f"This link confirms an address the account no longer has: {ASK_AGAIN}.",
                field="key",
            )
        _confirm(user)
    return user


def user_mark_email_confirmed(*, user: User) -> None:
    """Record an account's address confirmed without a mailed link: for accounts the platform
    makes itself (the reference bots' owners of tournaments/demo.py)."""
    if not user.email:
        raise ApplicationError("The account has no email address.", field="email")
    with transaction.atomic():
        _confirm(user)


def user_withdraw_email_confirmation(*, confirmed: ConfirmedEmail) -> None:
    """Withdraw an address's confirmation (staff): the account's bots wait off the ladders until
    it follows a new mailed link."""
    confirmed.delete()


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
    """Mail one message naming each active account of ``email`` that has a password, with a
    reset link for each; nothing once the mailbox was sent PASSWORD_RESET_MAILS_PER_HOUR
    this hour, however many clients ask (each is also throttled by its address)."""
    form = PasswordResetForm({"email": email})
    if not form.is_valid():
        return
    accounts = sorted(form.get_users(form.cleaned_data["email"]), key=lambda user: user.pk)
    if not accounts or not _count_reset_mail(mailbox_key(email)):
        return
    context = {
        "domain": domain,
        "protocol": protocol,
        "accounts": [
            {
                "user": user,
                "uid": urlsafe_base64_encode(force_bytes(user.pk)),
                "token": default_token_generator.make_token(user),
            }
            for user in accounts
        ],
    }
    subject = render_to_string("dashboard/password_reset_subject.txt", context)
    # To the address the accounts have, never the one asked with: the two compare equal
    # without case, but only the stored one is known to reach the accounts' reader.
    send_mail(
        " ".join(subject.split()),
        render_to_string("dashboard/password_reset_email.txt", context),
        settings.DEFAULT_FROM_EMAIL,
        [accounts[0].email],
    )


def _count_reset_mail(mailbox: str) -> bool:
    """Count one reset mail to the mailbox; tell whether it is within the hour's bound. While
    the cache cannot be reached the mail goes (logged), as the throttles let requests through."""
    key = password_reset_mails_key(mailbox)
    try:
        cache.add(key, 0, timeout=RESET_MAIL_WINDOW_SECONDS)
        sent = cache.incr(key)
    except ValueError:  # the count expired between the two calls: a new hour
        cache.set(key, 1, timeout=RESET_MAIL_WINDOW_SECONDS)
        sent = 1
    except Exception:  # any backend's failure
        logger.warning("password reset mail not counted, the cache is unreachable")
        return True
    if sent > settings.PASSWORD_RESET_MAILS_PER_HOUR:
        logger.info("password reset mail not sent: the mailbox had its %s this hour", sent - 1)
        return False
    return True
