"""The network policy refuses special addresses at registration and on every connection."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from typing import Any

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from arena.faults import BotFault, FaultKind
from arena.limits import Limits
from arena.netpolicy import EndpointRefused, NetworkPolicy, check_url
from arena.transport import BotClient, CallResult
from tests.support.hostile_bots import HostileBots

DEFAULT = NetworkPolicy()
LIMITS = Limits(time_limit_ms=1000)
PUBLIC = "93.184.216.34"

FORBIDDEN = [
    "127.0.0.1",
    "127.1.2.3",
    "0.0.0.0",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "192.0.0.170",
    "198.18.0.1",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fe80::1%1",
    "fc00::1",
    "fd12:3456::1",
    "fec0::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:10.0.0.1",
    "::127.0.0.1",
    "2002:7f00:1::1",  # 6to4 wrapping 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 wrapping 169.254.169.254
    "64:ff9b::a9fe:a9fe",  # NAT64 wrapping 169.254.169.254
    "2001:db8::1",
    "2001::1",  # Teredo
    "not an address",
]
ALLOWED = ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "2002:808:808::1"]


class FixedResolver(AbstractResolver):
    """Resolve every name from a fixed table, as a DNS server under someone's control would."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if host not in self.table:
            raise OSError(f"{host} does not resolve")
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=socket.AF_INET6 if ":" in address else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for address in self.table[host]
        ]

    async def close(self) -> None:
        pass


def fake_getaddrinfo(table: dict[str, list[str]]) -> Any:
    def getaddrinfo(host: str, port: int, **kwargs: Any) -> list[tuple[Any, ...]]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in table[host]]

    return getaddrinfo


def call(url: str, policy: NetworkPolicy, resolver: AbstractResolver | None = None) -> Any:
    async def go() -> CallResult:
        async with BotClient(limits=LIMITS, policy=policy, resolver=resolver) as client:
            return await client.call(url, "s", {"protocol": "ohhell/1", "type": "hello"})

    return asyncio.run(go())


def fault_of(url: str, policy: NetworkPolicy, resolver: AbstractResolver | None = None) -> Any:
    with pytest.raises(BotFault) as info:
        call(url, policy, resolver)
    return info.value


@pytest.mark.parametrize("address", FORBIDDEN)
def test_special_addresses_are_refused_by_default(address: str) -> None:
    assert not DEFAULT.is_allowed(address)


@pytest.mark.parametrize("address", ALLOWED)
def test_public_unicast_addresses_are_allowed_by_default(address: str) -> None:
    assert DEFAULT.is_allowed(address)


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"])
def test_allow_loopback_allows_loopback_in_every_spelling(address: str) -> None:
    assert NetworkPolicy(allow_loopback=True).is_allowed(address)


@pytest.mark.parametrize("address", ["10.0.0.1", "169.254.169.254", "fe80::1", "fc00::1"])
def test_allow_loopback_still_refuses_private_and_link_local(address: str) -> None:
    assert not NetworkPolicy(allow_loopback=True).is_allowed(address)


def test_allowed_networks_open_exactly_the_named_networks() -> None:
    policy = NetworkPolicy.from_settings(allowed_networks=["10.1.0.0/16", "fd00:1::/32"])

    assert policy.is_allowed("10.1.2.3")
    assert policy.is_allowed("::ffff:10.1.2.3")
    assert policy.is_allowed("fd00:1::5")
    assert not policy.is_allowed("10.2.0.1")
    assert not policy.is_allowed("127.0.0.1")
    assert policy.allowed_networks == (
        ipaddress.ip_network("10.1.0.0/16"),
        ipaddress.ip_network("fd00:1::/32"),
    )


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://93.184.216.34/", "http"),
        ("file:///etc/passwd", "http"),
        ("http://user:pw@93.184.216.34/", "password"),
        ("http:///bot", "no host"),
        ("http://93.184.216.34:99999/", "port"),
        ("http://93.184.216.34/a b", "spaces"),
        ("http://93.184.216.34/" + "a" * 600, "longer"),
        ("http://127.0.0.1:8000/", "127.0.0.1"),
        ("http://[::1]:8000/", "::1"),
        ("http://[fe80::1]/", "fe80::1"),
        ("http://[::ffff:127.0.0.1]/", "127.0.0.1"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://10.0.0.8/bot", "10.0.0.8"),
        ("http://nowhere.invalid/", "does not resolve"),
    ],
)
def test_check_url_refuses_bad_endpoints_with_a_reason(url: str, reason: str) -> None:
    with pytest.raises(EndpointRefused, match=re.escape(reason)):
        check_url(url, getaddrinfo=fake_getaddrinfo({}))


def test_check_url_refuses_localhost_resolved_by_the_system() -> None:
    with pytest.raises(EndpointRefused, match="localhost leads to"):
        check_url("http://localhost:8000/bot")


def test_check_url_refuses_a_name_if_any_of_its_addresses_is_forbidden() -> None:
    resolve = fake_getaddrinfo({"bot.example.com": [PUBLIC, "169.254.169.254"]})

    with pytest.raises(EndpointRefused, match=re.escape("169.254.169.254")):
        check_url("https://bot.example.com/play", getaddrinfo=resolve)


def test_check_url_accepts_a_public_endpoint_and_returns_it_stripped() -> None:
    resolve = fake_getaddrinfo({"bot.example.com": [PUBLIC]})

    assert check_url(" https://bot.example.com/play ", getaddrinfo=resolve) == (
        "https://bot.example.com/play"
    )


def test_check_url_accepts_loopback_when_the_policy_allows_it() -> None:
    policy = NetworkPolicy(allow_loopback=True)

    assert check_url("http://localhost:8001/", policy) == "http://localhost:8001/"


def test_a_loopback_ip_literal_is_refused_on_connection(hostile_bots: HostileBots) -> None:
    fault = fault_of(hostile_bots["fast"], DEFAULT)

    assert fault.kind == FaultKind.FORBIDDEN_ADDRESS


def test_no_request_reaches_a_forbidden_address(hostile_bots: HostileBots) -> None:
    before = hostile_bots.connections["fast"]

    fault_of(hostile_bots["fast"], DEFAULT)

    assert hostile_bots.connections["fast"] == before


def test_localhost_resolved_by_the_system_is_refused_on_connection(
    hostile_bots: HostileBots,
) -> None:
    url = hostile_bots["fast"].replace("127.0.0.1", "localhost")

    assert fault_of(url, DEFAULT).kind == FaultKind.FORBIDDEN_ADDRESS


@pytest.mark.parametrize("host", ["[::1]", "[fe80::1]", "[::ffff:127.0.0.1]", "[fc00::1]"])
def test_ipv6_special_literals_are_refused_on_connection(host: str) -> None:
    assert fault_of(f"http://{host}:9/", DEFAULT).kind == FaultKind.FORBIDDEN_ADDRESS


def test_a_name_rebound_to_loopback_after_registration_is_refused_on_connection(
    hostile_bots: HostileBots,
) -> None:
    port = hostile_bots["fast"].split(":")[2].split("/")[0]
    url = f"http://bot.example.com:{port}/bot"
    check_url(url, getaddrinfo=fake_getaddrinfo({"bot.example.com": [PUBLIC]}))

    rebound = FixedResolver({"bot.example.com": ["127.0.0.1"]})
    fault = fault_of(url, DEFAULT, rebound)

    assert fault.kind == FaultKind.FORBIDDEN_ADDRESS


def test_a_name_with_one_forbidden_address_among_others_is_refused_on_connection() -> None:
    resolver = FixedResolver({"bot.example.com": [PUBLIC, "10.0.0.1"]})

    fault = fault_of("http://bot.example.com/bot", DEFAULT, resolver)

    assert fault.kind == FaultKind.FORBIDDEN_ADDRESS


def test_a_name_resolving_to_loopback_connects_when_loopback_is_allowed(
    hostile_bots: HostileBots,
) -> None:
    port = hostile_bots["fast"].split(":")[2].split("/")[0]
    resolver = FixedResolver({"bot.example.com": ["127.0.0.1"]})

    policy = NetworkPolicy(allow_loopback=True)

    result = call(f"http://bot.example.com:{port}/bot", policy, resolver)

    assert result.data["ok"] is True


def test_an_allowed_network_lets_the_arena_connect(hostile_bots: HostileBots) -> None:
    policy = NetworkPolicy.from_settings(allowed_networks=["127.0.0.0/8"])

    assert call(hostile_bots["fast"], policy).data["ok"] is True
