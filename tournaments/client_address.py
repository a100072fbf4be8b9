"""Who sent a request: the one answer every throttle, lockout and log uses.

``X-Forwarded-For`` is written by whoever sends the request, so it is believed only as far as
``TRUSTED_PROXIES`` says: each proxy appends the address it was connected from, so the list is
read from the right, starting at the connection's own address, past the trusted proxies. The
first address that is not one of them is the client's; anything further left is the client's
own word and ignored.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from django.conf import settings

from config.env import TrustedProxies

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _parse(entry: str) -> IPAddress | None:
    """An address as a proxy writes it: bare, ``[v6]`` or with a port; None when it is none."""
    entry = entry.strip()
    if entry.startswith("[") and "]" in entry:
        entry = entry[1 : entry.index("]")]
    elif entry.count(":") == 1:
        entry = entry.partition(":")[0]
    try:
        address = ipaddress.ip_address(entry)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _trusted(proxies: TrustedProxies, hop: int, address: IPAddress) -> bool:
    """Whether the ``hop``-th address from the right (0: the connection's) is a proxy's."""
    if proxies.count:
        return hop < proxies.count
    return any(address in network for network in proxies.networks)


def client_address(request: Any) -> str:
    """The client's address, by the connection and the proxies ``TRUSTED_PROXIES`` names.

    Takes a Django or a DRF request. An address a trusted proxy wrote that is not an address
    at all stops the walk at that proxy, so garbage never becomes a client of its own.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    proxies: TrustedProxies = settings.TRUSTED_PROXIES
    current = _parse(remote)
    if current is None:
        return remote
    if not (proxies.count or proxies.networks):
        return str(current)
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
    chain = [entry for entry in forwarded if entry.strip()]
    for hop, entry in enumerate(reversed(chain)):
        previous = _parse(entry) if _trusted(proxies, hop, current) else None
        if previous is None:
            break
        current = previous
    return str(current)
