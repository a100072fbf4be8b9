"""Typed readers for settings taken from the environment.

Each helper returns a default when the variable is unset or empty, and raises
ImproperlyConfigured naming the variable when its value cannot be used, so a typo in a
deployment stops start-up instead of surfacing later as odd behaviour.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_RATE = re.compile(r"^\d+/(s|sec|second|m|min|minute|h|hour|d|day)$")


def _raw(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _bad(name: str, value: str, expected: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}={value!r} is not valid: expected {expected}.")


def is_set(name: str) -> bool:
    """Tell whether the variable is set to a non-empty value."""
    return _raw(name) is not None


def env_str(name: str, default: str = "") -> str:
    """Read a string."""
    value = _raw(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean written as 1/0, true/false, yes/no or on/off."""
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise _bad(name, value, "one of 1/0, true/false, yes/no, on/off")


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """Read an integer, optionally bounded."""
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise _bad(name, value, "an integer") from None
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        raise _bad(name, value, f"an integer between {minimum} and {maximum}")
    return number


def env_float(name: str, default: float, *, minimum: float, maximum: float) -> float:
    """Read a finite number within bounds."""
    value = _raw(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise _bad(name, value, "a number") from None
    if not minimum <= number <= maximum:  # also refuses nan
        raise _bad(name, value, f"a number between {minimum} and {maximum}")
    return number


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """Read one of a fixed set of words, case-insensitively."""
    value = env_str(name, default)
    if value.lower() not in choices:
        raise _bad(name, value, f"one of {', '.join(choices)}")
    return value.lower()


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    """Read a comma-separated list; blank items are dropped."""
    value = _raw(name)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]


def env_networks(name: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Read a comma-separated list of CIDR networks such as ``10.0.0.0/8,fd00::/8``."""
    networks = []
    for item in env_list(name):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise _bad(name, item, "CIDR networks such as 10.0.0.0/8") from None
    return networks


@dataclass(frozen=True)
class TrustedProxies:
    """The reverse proxies in front of the web server, whose ``X-Forwarded-For`` is believed.

    Either a number of proxies (``count``) or the networks they connect from (``networks``);
    neither: the connection's own address is the client's.
    """

    count: int = 0
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()


def env_trusted_proxies(name: str, *, maximum: int = 20) -> TrustedProxies:
    """Read a number of proxies such as ``1``, or their CIDR networks such as ``10.0.0.0/8``."""
    value = _raw(name)
    if value is None:
        return TrustedProxies()
    if value.isascii() and value.isdecimal():
        return TrustedProxies(count=env_int(name, 0, minimum=0, maximum=maximum))
    try:
        return TrustedProxies(networks=tuple(env_networks(name)))
    except ImproperlyConfigured:
        expected = f"a number of proxies from 0 to {maximum}, or CIDR networks such as 10.0.0.0/8"
        raise _bad(name, value, expected) from None


def env_rate(name: str, default: str) -> str:
    """Read a throttle rate such as ``60/minute``."""
    value = env_str(name, default)
    if not _RATE.match(value):
        raise _bad(name, value, "a rate such as 60/minute, 10/second, 1000/day")
    return value


def env_url(name: str, default: str, *, schemes: tuple[str, ...]) -> str:
    """Read a URL whose scheme is one of ``schemes``."""
    value = env_str(name, default)
    if not value:
        return value
    parts = urlsplit(value)
    if parts.scheme not in schemes:
        raise _bad(name, value, f"a URL starting with {' or '.join(s + '://' for s in schemes)}")
    if parts.scheme != "sqlite" and not parts.hostname:
        raise _bad(name, value, "a URL with a host name")
    try:
        parts.port  # noqa: B018 (read for the ValueError a bad port raises)
    except ValueError:
        raise _bad(name, value, "a URL with a numeric port from 0 to 65535, or none") from None
    return value


@dataclass(frozen=True)
class DatabaseUrl:
    """The parts of ``DATABASE_URL`` Django needs."""

    engine: str
    name: str
    user: str = ""
    password: str = ""
    host: str = ""
    port: str = ""
    options: dict[str, str] | None = None


def parse_database_url(name: str, value: str) -> DatabaseUrl:
    """Split ``postgres://user:pass@host:port/db?opt=v`` or ``sqlite:///path`` into parts."""
    parts = urlsplit(value)
    if parts.scheme == "sqlite":
        path = parts.path[1:] if parts.path.startswith("/") else parts.path
        if not path:
            raise _bad(name, value, "sqlite:///relative/path or sqlite:////absolute/path")
        return DatabaseUrl(engine="django.db.backends.sqlite3", name=path)
    database = unquote(parts.path.lstrip("/"))
    if not database:
        raise _bad(name, value, "a database name after the host, as in postgres://host/ohhell")
    try:
        port = str(parts.port or "")
    except ValueError:
        raise _bad(name, value, "a numeric port") from None
    return DatabaseUrl(
        engine="django.db.backends.postgresql",
        name=database,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        host=parts.hostname or "",
        port=port,
        options=dict(parse_qsl(parts.query)),
    )
