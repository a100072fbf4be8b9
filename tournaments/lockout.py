"""Sign-in attempts counted per account, whatever address they come from.

The per-address throttle alone lets a guesser with many addresses try one account without end.
So each account's attempts since its last successful sign-in are counted in the shared cache;
past ``AUTH_LOCKOUT_FAILURES`` every sign-in of it is refused for ``AUTH_LOCKOUT_SECONDS``
without its password being checked, so a right guess during the lockout looks like any other.
Attempts are counted before the password is checked, so parallel guesses cannot outrun the
count. The check sits in the authentication backend, so the API's token endpoint, the sign-in
page and the admin's all share it; the first two answer 429 with the time left.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from redis.exceptions import RedisError

from tournaments.cache_keys import sign_in_attempts_key, sign_in_lockout_key
from tournaments.client_address import client_address

logger = logging.getLogger(__name__)


def sign_in_lockout(username: str) -> float | None:
    """Seconds left of the account's lockout; None when it may sign in."""
    try:
        until = cache.get(sign_in_lockout_key(username))
    except RedisError as exc:
        logger.warning("sign-in lockout skipped, the cache is unreachable: %s", exc)
        return None
    left = None if until is None else float(until) - time.time()
    return left if left is not None and left > 0 else None


def _count_attempt(username: str) -> int:
    key = sign_in_attempts_key(username)
    cache.add(key, 0, timeout=settings.AUTH_LOCKOUT_SECONDS)
    try:
        return cache.incr(key)
    except ValueError:  # the count expired between the two calls
        cache.set(key, 1, timeout=settings.AUTH_LOCKOUT_SECONDS)
        return 1


def _admitted(request: HttpRequest | None, username: str) -> bool:
    """Count an attempt of the account; False when it is (now) locked out."""
    if sign_in_lockout(username) is not None:
        return False
    try:
        if _count_attempt(username) <= settings.AUTH_LOCKOUT_FAILURES:
            return True
        seconds = settings.AUTH_LOCKOUT_SECONDS
        cache.add(sign_in_lockout_key(username), time.time() + seconds, timeout=seconds)
        cache.delete(sign_in_attempts_key(username))
    except RedisError as exc:
        logger.warning("sign-in lockout skipped, the cache is unreachable: %s", exc)
        return True
    address = client_address(request) if request is not None else "no request"
    logger.warning(
        "sign-in of %r locked out for %d s after %d attempts; the last from %s",
        username,
        seconds,
        settings.AUTH_LOCKOUT_FAILURES,
        address,
    )
    return False


def _forget_attempts(username: str) -> None:
    try:
        cache.delete(sign_in_attempts_key(username))
    except RedisError as exc:
        logger.warning("sign-in attempts not reset, the cache is unreachable: %s", exc)


class LockoutModelBackend(ModelBackend):
    """Django's username and password check, refused outright while the account is locked."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None
        if not _admitted(request, str(username)):
            # Django's authenticate() takes this as "refused": no other backend is tried.
            raise PermissionDenied
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None:
            _forget_attempts(str(username))
        return user
