"""The client's address: the connection's, read past the trusted proxies only."""

from __future__ import annotations

import ipaddress

import pytest
from django.test import RequestFactory

from config.env import TrustedProxies
from tournaments.client_address import client_address

NONE = TrustedProxies()
ONE = TrustedProxies(count=1)
TWO = TrustedProxies(count=2)
NETWORKS = TrustedProxies(
    networks=(ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("10.0.0.0/8"))
)


def address(settings, proxies: TrustedProxies, remote: str, forwarded: str | None = None) -> str:
    settings.TRUSTED_PROXIES = proxies
    request = RequestFactory().get("/", REMOTE_ADDR=remote)
    if forwarded is not None:
        request.META["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_address(request)


@pytest.mark.parametrize(
    ("proxies", "remote", "forwarded", "client"),
    [
        # No proxies named: the connection is the client, whatever the header says.
        (NONE, "198.51.100.7", None, "198.51.100.7"),
        (NONE, "198.51.100.7", "203.0.113.1", "198.51.100.7"),
        # A count: that many hops from the right.
        (ONE, "127.0.0.1", "203.0.113.9", "203.0.113.9"),
        (ONE, "127.0.0.1", "6.6.6.6, 203.0.113.9", "203.0.113.9"),
        (ONE, "127.0.0.1", None, "127.0.0.1"),
        (TWO, "10.0.0.2", "6.6.6.6, 203.0.113.9, 10.0.0.1", "203.0.113.9"),
        # Fewer hops than proxies: the left-most there is.
        (TWO, "10.0.0.2", "203.0.113.9", "203.0.113.9"),
        # Networks: from the right, past every trusted address.
        (NETWORKS, "127.0.0.1", "6.6.6.6, 203.0.113.9, 10.1.2.3", "203.0.113.9"),
        (NETWORKS, "127.0.0.1", "6.6.6.6,203.0.113.9", "203.0.113.9"),
        (NETWORKS, "10.0.0.5", "10.0.0.4, 10.0.0.3", "10.0.0.4"),
        # A connection from outside the networks is the client, whatever it claims.
        (NETWORKS, "198.51.100.7", "127.0.0.1, 10.0.0.1", "198.51.100.7"),
        # Garbage written as a trusted hop's client stops the walk at that proxy.
        (NETWORKS, "127.0.0.1", "203.0.113.9, not-an-address", "127.0.0.1"),
        (ONE, "127.0.0.1", "unknown", "127.0.0.1"),
        # Ports, brackets and IPv4 in IPv6, as proxies and servers write them.
        (ONE, "127.0.0.1", "203.0.113.9:4711", "203.0.113.9"),
        (ONE, "127.0.0.1", "[2001:db8::1]:4711", "2001:db8::1"),
        (NETWORKS, "::ffff:127.0.0.1", "2001:db8::1", "2001:db8::1"),
        (NONE, "::ffff:198.51.100.7", None, "198.51.100.7"),
    ],
)
def test_the_client_is_the_first_address_left_of_the_trusted_proxies(
    settings, proxies, remote, forwarded, client
) -> None:
    assert address(settings, proxies, remote, forwarded) == client


@pytest.mark.parametrize("proxies", [ONE, NETWORKS], ids=["count", "networks"])
def test_a_spoofed_left_most_value_changes_nothing(settings, proxies) -> None:
    seen = {
        address(settings, proxies, "127.0.0.1", f"{spoof}, 203.0.113.9")
        for spoof in ("1.1.1.1", "10.0.0.1", "127.0.0.1", "::1", "garbage")
    }
    assert seen == {"203.0.113.9"}


def test_a_connection_without_an_address_is_answered_as_it_is(settings) -> None:
    # gunicorn on a Unix socket gives no REMOTE_ADDR; the header still counts for nothing.
    assert address(settings, ONE, "", "203.0.113.9") == ""
