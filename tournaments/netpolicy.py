"""The deployment's bot network policy and call limits, built from settings over the arena's."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import replace
from urllib.parse import urlsplit

from django.conf import settings

from arena.limits import Limits
from arena.netcheck import TcpCheck
from arena.netpolicy import EndpointRefused, NetworkPolicy, check_url, resolve_addresses

MAX_URL_LENGTH = NetworkPolicy().max_url_length
# Ports of the URLs the network check connects to, when a URL names none.
DEFAULT_PORTS = {"redis": 6379, "rediss": 6379, "http": 80, "https": 443}

__all__ = [
    "MAX_URL_LENGTH",
    "EndpointRefused",
    "arena_network_check",
    "bot_limits",
    "bot_network_policy",
    "check_endpoint_url",
    "endpoint_addresses",
    "spell_address",
]


def bot_network_policy() -> NetworkPolicy:
    """Return the policy the settings give: BOT_ALLOW_LOOPBACK and BOT_ALLOWED_NETWORKS."""
    return NetworkPolicy.from_settings(
        allow_loopback=settings.BOT_ALLOW_LOOPBACK,
        allowed_networks=settings.BOT_ALLOWED_NETWORKS,
    )


def check_endpoint_url(url: str) -> str:
    """Vet a bot endpoint URL and every address it resolves to; return it stripped.

    A refusal that only loopback is to blame for says which setting allows it.
    """
    policy = bot_network_policy()
    try:
        return check_url(url, policy)
    except EndpointRefused as refused:
        if policy.allow_loopback:
            raise
        try:
            check_url(url, replace(policy, allow_loopback=True))
        except EndpointRefused:
            raise refused from None
        raise EndpointRefused(
            f"{refused}; this server refuses loopback endpoints unless BOT_ALLOW_LOOPBACK=1 is "
            "set (./run and ./run serve set it on embedded defaults, to try a bot locally)"
        ) from None


def endpoint_addresses(url: str) -> list[str]:
    """Every address a bot endpoint's host resolves to now, in one spelling each, sorted.

    An IPv4 address written as IPv6 (``::ffff:192.0.2.1``) is spelled as IPv4, so one host
    reached both ways is one address. Raises EndpointRefused when the host does not resolve.
    """
    parts = urlsplit(url)
    if not parts.hostname:
        raise EndpointRefused("the URL has no host")
    port = parts.port or DEFAULT_PORTS.get(parts.scheme.lower(), 80)
    found = resolve_addresses(parts.hostname, port, getaddrinfo=socket.getaddrinfo)
    return sorted({spell_address(address) for address in found})


def spell_address(address: str) -> str:
    """One spelling of an IP address: compressed, no zone, IPv4-mapped IPv6 written as IPv4."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def bot_limits(time_limit_ms: int | None = None, time_bank_ms: int = 0) -> Limits:
    """The limits on calls to bots: a match's time control and time bank, the deployment's size
    and hello caps."""
    return Limits(
        time_limit_ms=time_limit_ms or settings.BOT_DEFAULT_TIME_LIMIT_MS,
        time_bank_ms=time_bank_ms,
        max_response_bytes=settings.BOT_MAX_RESPONSE_BYTES,
        hello_time_limit_ms=settings.BOT_HELLO_TIMEOUT_MS,
        outage_wait_s=settings.ARENA_OUTAGE_WAIT_SECONDS,
        max_match_s=settings.MATCH_MAX_SECONDS,
    )


def arena_network_check() -> TcpCheck | None:
    """The check of the worker's own network a match asks before charging a network fault.

    A TCP connect, within ARENA_NETWORK_CHECK_TIMEOUT_MS, to the broker of REDIS_URL and to
    ARENA_NETWORK_CHECK_URL, whichever are set; it passes when all of them connect. None when
    neither is set (embedded and in-process modes without Redis): every fault is then charged.
    """
    urls = [url for url in (settings.REDIS_URL, settings.ARENA_NETWORK_CHECK_URL) if url]
    if not urls:
        return None
    return TcpCheck(
        targets=tuple(_address(url) for url in urls),
        timeout_s=settings.ARENA_NETWORK_CHECK_TIMEOUT_MS / 1000,
    )


def _address(url: str) -> tuple[str, int]:
    """The host and port a URL names, its scheme's port when it names none."""
    parts = urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"{url!r} names no host to check the network against")
    return parts.hostname, parts.port or DEFAULT_PORTS[parts.scheme]
