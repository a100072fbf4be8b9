"""Worker hosts as network namespaces: each with a veth pair to the root namespace on a private
/30, and one hub address in the root namespace where every service the hosts need answers."""

from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass

NETWORK = ipaddress.IPv4Network("10.200.0.0/16")
PREFIX = "ohhb"  # names of the benches' namespaces and interfaces


@dataclass(frozen=True)
class HostPlan:
    """One worker host: its namespace, its veth pair and the pair's /30."""

    index: int
    name: str  # host name inside the host, and the worker's node name
    netns: str
    veth_root: str  # the root namespace's end
    veth_host: str  # the host's end
    subnet: ipaddress.IPv4Network
    root_address: ipaddress.IPv4Address
    host_address: ipaddress.IPv4Address


@dataclass(frozen=True)
class NetworkPlan:
    hub: ipaddress.IPv4Address  # where PostgreSQL, Redis and the bots answer
    hosts: list[HostPlan]


def plan_hosts(count: int, network: ipaddress.IPv4Network = NETWORK) -> NetworkPlan:
    """Give ``count`` hosts a /30 each (the i-th /24 of ``network``), the hub the first address."""
    if network.prefixlen > 16 or not network.is_private:
        raise ValueError(f"{network} must be a private network of /16 or more")
    if not 1 <= count <= 250:
        raise ValueError("between 1 and 250 hosts")
    base = int(network.network_address)
    hosts = []
    for i in range(1, count + 1):
        subnet = ipaddress.IPv4Network((base + 256 * i, 30))
        hosts.append(
            HostPlan(
                index=i,
                name=f"host{i}",
                netns=f"{PREFIX}-host{i}",
                veth_root=f"{PREFIX}{i}",
                veth_host=f"{PREFIX}{i}h",
                subnet=subnet,
                root_address=subnet.network_address + 1,
                host_address=subnet.network_address + 2,
            )
        )
    return NetworkPlan(hub=network.network_address + 1, hosts=hosts)


def setup_commands(plan: NetworkPlan) -> list[list[str]]:
    """The ``ip`` commands that build the plan (the hub address first)."""
    commands = [["ip", "addr", "add", f"{plan.hub}/32", "dev", "lo"]]
    for host in plan.hosts:
        inside = ["ip", "-n", host.netns]
        plen = host.subnet.prefixlen
        commands += [
            ["ip", "netns", "add", host.netns],
            ["ip", "link", "add", host.veth_root, "type", "veth", "peer", "name", host.veth_host],
            ["ip", "link", "set", host.veth_host, "netns", host.netns],
            ["ip", "addr", "add", f"{host.root_address}/{plen}", "dev", host.veth_root],
            ["ip", "link", "set", host.veth_root, "up"],
            [*inside, "addr", "add", f"{host.host_address}/{plen}", "dev", host.veth_host],
            [*inside, "link", "set", host.veth_host, "up"],
            [*inside, "link", "set", "lo", "up"],
            # The hub only: nothing else is routed out of a host.
            [*inside, "route", "add", f"{plan.hub}/32", "via", str(host.root_address)],
        ]
    return commands


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


def teardown_network(plan: NetworkPlan) -> None:
    """Remove whatever part of the plan exists (deleting a namespace deletes its veth pair)."""
    existing = _ip("netns", "list").stdout.split()
    for host in plan.hosts:
        if host.netns in existing:
            _ip("netns", "del", host.netns)
        if _ip("link", "show", host.veth_root).returncode == 0:
            _ip("link", "del", host.veth_root)
    if f"{plan.hub}/32" in _ip("-4", "-o", "addr", "show", "dev", "lo").stdout:
        _ip("addr", "del", f"{plan.hub}/32", "dev", "lo")


def build_network(plan: NetworkPlan) -> None:
    """Build the plan afresh, after removing what a killed run left."""
    teardown_network(plan)
    for command in setup_commands(plan):
        subprocess.run(command, check=True, capture_output=True, text=True)


def set_link(host: HostPlan, up: bool) -> None:
    """Bring the link between the root namespace and a host up or down (a cut)."""
    subprocess.run(
        ["ip", "link", "set", host.veth_root, "up" if up else "down"], check=True, text=True
    )
