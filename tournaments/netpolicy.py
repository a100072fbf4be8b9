"""Which bot endpoints the platform may call.

Bots run on other people's servers, so an endpoint URL is untrusted input: it must not point
the platform at itself, its private network or a cloud metadata service. Loopback and named
networks can be allowed by settings for development and tests.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

MAX_URL_LENGTH = 500
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class EndpointRefused(ValueError):
    """The endpoint URL or the address it leads to is not allowed."""


def address_allowed(
    address: IPAddress, *, allow_loopback: bool, allowed_networks: Iterable[Network] = ()
) -> bool:
    """Tell whether the platform may connect to ``address``."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    if any(address in network for network in allowed_networks):
        return True
    if address.is_loopback:
        return allow_loopback
    return address.is_global and not address.is_multicast and not address.is_reserved


def check_address(address: IPAddress) -> None:
    """Refuse an address the settings do not allow."""
    if not address_allowed(
        address,
        allow_loopback=settings.BOT_ALLOW_LOOPBACK,
        allowed_networks=settings.BOT_ALLOWED_NETWORKS,
    ):
        raise EndpointRefused(
            f"the address {address} is loopback, private, link-local, multicast or reserved, "
            "which bots may not use"
        )


def parse_endpoint_url(url: str) -> SplitResult:
    """Check the shape of an endpoint URL: http(s), a host, no credentials, not too long."""
    if len(url) > MAX_URL_LENGTH:
        raise EndpointRefused(f"the URL is longer than {MAX_URL_LENGTH} characters")
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise EndpointRefused("the URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise EndpointRefused("the URL is malformed") from None
    if parts.scheme not in ("http", "https"):
        raise EndpointRefused("the URL must start with http:// or https://")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise EndpointRefused("the URL must not contain credentials")
    if not parts.hostname:
        raise EndpointRefused("the URL has no host")
    if parts.fragment:
        raise EndpointRefused("the URL must not contain a fragment")
    return parts


def resolve(host: str, port: int) -> list[IPAddress]:
    """Resolve a host name (or literal) to its addresses."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise EndpointRefused(f"the host {host!r} does not resolve") from None
    return list(dict.fromkeys(ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos))


def check_endpoint_url(url: str) -> list[IPAddress]:
    """Check an endpoint URL and every address its host resolves to; return the addresses."""
    parts = parse_endpoint_url(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    addresses = resolve(parts.hostname, port)
    for address in addresses:
        check_address(address)
    return addresses
