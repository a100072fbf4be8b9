"""Which addresses the arena may call: checked at registration and on every connection.

An endpoint URL is untrusted input: it must not point the platform at itself, its private
network or a cloud metadata service. ``check_url`` vets a URL when a bot is registered; on every
connection, ``PolicyResolver`` refuses a name if any address it resolves to is forbidden, and
``policy_socket_factory`` checks the exact address each socket connects to (IP literals skip the
resolver), so a name re-pointed after registration (DNS rebinding) gains nothing.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
AddrInfo = tuple[Any, ...]

# Refused unless a policy names them in ``allowed_networks``. ``is_global`` is checked too;
# this table keeps the refusals explicit and stable across Python versions.
FORBIDDEN_NETWORKS: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(net)
    for net in (
        "0.0.0.0/8",  # "this network", 0.0.0.0 reaches the local host
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # carrier-grade NAT
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, including cloud metadata at 169.254.169.254
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",  # private
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, including broadcast 255.255.255.255
        "::/128",  # unspecified
        "::1/128",  # loopback
        "::/96",  # IPv4-compatible (deprecated)
        "::ffff:0:0/96",  # IPv4-mapped, checked again as IPv4 first
        "64:ff9b:1::/48",  # local-use NAT64
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments, including Teredo
        "2001:db8::/32",  # documentation
        "fc00::/7",  # unique local (private)
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class EndpointRefused(ValueError):
    """An endpoint URL, or an address it leads to, is not allowed; the message says why."""


class ForbiddenAddressError(OSError):
    """A connection was about to reach an address the policy refuses."""

    def __init__(self, address: str) -> None:
        super().__init__(f"address {address} is forbidden by the network policy")
        self.address = address


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """Return the IPv4 address a transition prefix would deliver to, if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


@dataclass(frozen=True, slots=True)
class NetworkPolicy:
    """The addresses bots may live at: public unicast only, unless a deployment allows more."""

    # For local development and tests: allow 127.0.0.0/8 and ::1.
    allow_loopback: bool = False
    # Networks allowed even though they are private or special, e.g. a bot farm on 10.1.0.0/16.
    allowed_networks: tuple[IPNetwork, ...] = field(default=())
    max_url_length: int = 500

    def __post_init__(self) -> None:
        networks = tuple(ipaddress.ip_network(n) for n in self.allowed_networks)
        object.__setattr__(self, "allowed_networks", networks)

    @classmethod
    def from_settings(
        cls, *, allow_loopback: bool = False, allowed_networks: Iterable[str | IPNetwork] = ()
    ) -> NetworkPolicy:
        """Build a policy from deployment settings, parsing network strings."""
        networks = tuple(ipaddress.ip_network(n) for n in allowed_networks)
        return cls(allow_loopback=allow_loopback, allowed_networks=networks)

    def is_allowed(self, address: str | IPAddress) -> bool:
        """Tell whether the arena may connect to ``address``."""
        try:
            ip = ipaddress.ip_address(address) if isinstance(address, str) else address
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address):
            if ip.scope_id:
                ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
            if any(ip in net for net in self.allowed_networks if net.version == 6):
                return True
            embedded = _embedded_ipv4(ip)
            if embedded is not None:
                return self.is_allowed(embedded)
        elif any(ip in net for net in self.allowed_networks if net.version == 4):
            return True
        if ip.is_loopback:
            return self.allow_loopback
        if any(ip in net for net in FORBIDDEN_NETWORKS if net.version == ip.version):
            return False
        return ip.is_global and not ip.is_multicast

    def check_address(self, address: str | IPAddress) -> None:
        """Raise ``ForbiddenAddressError`` unless the arena may connect to ``address``."""
        if not self.is_allowed(address):
            raise ForbiddenAddressError(str(address))


DEFAULT_POLICY = NetworkPolicy()
GetAddrInfo = Callable[..., Sequence[AddrInfo]]


def check_url(
    url: str,
    policy: NetworkPolicy = DEFAULT_POLICY,
    *,
    getaddrinfo: GetAddrInfo = socket.getaddrinfo,
) -> str:
    """Vet a bot endpoint URL at registration; return it stripped, or raise EndpointRefused.

    The host is resolved now and refused if ANY address it resolves to is forbidden; the same
    check runs again on every connection.
    """
    url = url.strip()
    if len(url) > policy.max_url_length:
        raise EndpointRefused(f"the URL is longer than {policy.max_url_length} characters")
    if any(ord(ch) < 0x21 or ord(ch) == 0x7F for ch in url):
        raise EndpointRefused("the URL contains spaces or control characters")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise EndpointRefused("the URL must start with http:// or https://")
    if "@" in parts.netloc:
        raise EndpointRefused("the URL must not contain a user name or password")
    host = parts.hostname
    if not host:
        raise EndpointRefused("the URL has no host")
    try:
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        raise EndpointRefused("the URL has an invalid port") from None
    for address in resolve_addresses(host, port, getaddrinfo=getaddrinfo):
        if not policy.is_allowed(address):
            raise EndpointRefused(
                f"{host} leads to {address}, a loopback, private, link-local, multicast or "
                "reserved address, which bots may not use"
            )
    return url


def resolve_addresses(host: str, port: int, *, getaddrinfo: GetAddrInfo) -> list[str]:
    """Return every address ``host`` resolves to, or raise EndpointRefused if none."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    try:
        infos = getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise EndpointRefused(f"the host {host} does not resolve: {exc}") from None
    addresses = [info[4][0] for info in infos]
    if not addresses:
        raise EndpointRefused(f"the host {host} does not resolve")
    return addresses


class PolicyResolver(AbstractResolver):
    """Resolve names for aiohttp, refusing a name if any address it has is forbidden."""

    def __init__(self, policy: NetworkPolicy, inner: AbstractResolver | None = None) -> None:
        self._policy = policy
        self._inner = inner if inner is not None else ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """Resolve ``host`` with the inner resolver and refuse forbidden answers."""
        results = await self._inner.resolve(host, port, family)
        for result in results:
            self._policy.check_address(result["host"])
        return results

    async def close(self) -> None:
        """Release the inner resolver."""
        await self._inner.close()


def policy_socket_factory(policy: NetworkPolicy) -> Callable[[AddrInfo], socket.socket]:
    """Return an aiohttp socket factory that refuses to connect to a forbidden address."""

    def create_socket(addr_info: AddrInfo) -> socket.socket:
        family, type_, proto, _, sockaddr = addr_info
        policy.check_address(sockaddr[0])
        return socket.socket(family=family, type=type_, proto=proto)

    return create_socket
