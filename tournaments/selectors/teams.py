"""Which bots are one team: the matchmaker never seats two bots of one team at a table.

A bot's team keys are its owner, and each address its endpoint resolved to at its last passed
check (``Bot.endpoint_addresses``): one server behind several bots sees all their hands,
whoever registered them. An IPv6 address counts by its /64, the block one host is normally
given, so a bot farm cannot pass for many hosts by taking a fresh address from it. An address
staff list as a ``SharedHost`` (a course server hosting every student's bot) is no team; the
owner rule holds there too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from functools import lru_cache

from tournaments.models import Bot, SharedHost
from tournaments.netpolicy import spell_address


def owner_team(owner_id: int) -> str:
    """The team key of everything one account enters."""
    return f"owner:{owner_id}"


# A top-up reads every opted-in bot's addresses: parsing each once per process is enough.
@lru_cache(maxsize=65536)
def address_team(address: str) -> str:
    """The team key of the bots behind one address (an IPv6 address by its /64)."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        return f"address:{ipaddress.IPv6Network((ip, 64), strict=False)}"
    return f"address:{ip}"


def shared_hosts() -> set[str]:
    """The addresses staff listed as hosting the bots of many people."""
    return {spell_address(a) for a in SharedHost.objects.values_list("address", flat=True)}


def bot_teams(*, bot_ids: Iterable[int]) -> dict[int, frozenset[str]]:
    """Each bot's team keys: its owner, and its endpoint's addresses that are not shared hosts."""
    shared = shared_hosts()
    return {
        pk: team_keys(owner_id, addresses, shared)
        for pk, owner_id, addresses in Bot.objects.filter(pk__in=list(bot_ids)).values_list(
            "pk", "owner_id", "endpoint_addresses"
        )
    }


def team_keys(owner_id: int, addresses: Iterable[str], shared: set[str]) -> frozenset[str]:
    """One bot's team keys, given its owner, its endpoint's addresses and the shared hosts."""
    return frozenset(
        {owner_team(owner_id), *(address_team(a) for a in addresses if a not in shared)}
    )
