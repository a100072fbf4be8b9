"""The pure parts of bench/bench_hosts.py and its support: address planning, process accounting
and sizing."""

from __future__ import annotations

import ipaddress
import math

import pytest

from bench.hosts.hub import hub_database_url
from bench.hosts.throughput import PerMatch, bot_calls, rotation, size_ladder
from bench.support.forwarder import KEEPALIVE_IDLE_S, USER_TIMEOUT_MS
from bench.support.netns import plan_hosts, setup_commands
from bench.support.processes import cpu_seconds
from config.env import parse_database_url
from engine.presets import preset


def test_each_host_gets_a_private_slash_30_apart_from_the_hub() -> None:
    plan = plan_hosts(3)
    assert plan.hub == ipaddress.IPv4Address("10.200.0.1")
    subnets = [host.subnet for host in plan.hosts]
    assert [str(s) for s in subnets] == ["10.200.1.0/30", "10.200.2.0/30", "10.200.3.0/30"]
    for host in plan.hosts:
        assert {host.root_address, host.host_address} <= set(host.subnet.hosts())
        assert host.root_address != host.host_address
        assert plan.hub not in host.subnet
        assert host.subnet.is_private
    names = [n for h in plan.hosts for n in (h.netns, h.veth_root, h.veth_host, h.name)]
    assert len(set(names)) == len(names)
    # Interface names longer than IFNAMSIZ - 1 are refused by the kernel.
    assert all(len(n) <= 15 for h in plan.hosts for n in (h.veth_root, h.veth_host))


@pytest.mark.parametrize(
    ("count", "network"), [(0, "10.200.0.0/16"), (251, "10.200.0.0/16"), (3, "8.8.0.0/16")]
)
def test_a_plan_refuses_public_networks_and_impossible_counts(count, network) -> None:
    with pytest.raises(ValueError):
        plan_hosts(count, ipaddress.IPv4Network(network))


def test_a_host_is_routed_to_the_hub_and_nowhere_else() -> None:
    plan = plan_hosts(2)
    commands = setup_commands(plan)
    assert commands[0] == ["ip", "addr", "add", "10.200.0.1/32", "dev", "lo"]
    routes = [c for c in commands if "route" in c]
    assert routes == [
        ["ip", "-n", h.netns, "route", "add", "10.200.0.1/32", "via", str(h.root_address)]
        for h in plan.hosts
    ]


def test_hosts_reach_the_database_through_the_hub_with_keepalive_options_the_settings_pass() -> (
    None
):
    url = hub_database_url("postgres://postgres@127.0.0.1:5432/ohhell?sslmode=disable",
                                 "10.200.0.1", 15432)  # fmt: skip
    parsed = parse_database_url("DATABASE_URL", url)
    assert (parsed.user, parsed.host, parsed.port, parsed.name) == (
        "postgres",
        "10.200.0.1",
        "15432",
        "ohhell",
    )
    assert parsed.options is not None
    assert parsed.options["sslmode"] == "disable"
    assert parsed.options["tcp_user_timeout"] == str(USER_TIMEOUT_MS)
    assert parsed.options["keepalives_idle"] == str(KEEPALIVE_IDLE_S)


def test_cpu_seconds_read_past_a_command_name_with_spaces_and_parentheses() -> None:
    fields = ["S", *["0"] * 10, "250", "150", *["0"] * 30]
    line = "4242 (celery (host 1)) " + " ".join(fields)
    assert cpu_seconds(line, 100) == pytest.approx(4.0)


def test_the_host_counts_take_turns_going_first() -> None:
    orders = [rotation([1, 2, 3], r) for r in range(3)]
    assert orders == [[1, 2, 3], [2, 3, 1], [3, 1, 2]]


def test_bot_calls_are_a_hello_each_then_every_bid_and_card() -> None:
    assert bot_calls(preset("oh-hell", max_cards=3, order="down"), 4) == 4 + 12 + 24
    assert bot_calls(preset("oh-hell"), 4) == 4 + 19 * 4 + 109 * 4


def test_sizing_scales_measured_matches_call_for_call() -> None:
    measured = PerMatch(
        calls=40, seconds=2.5, cpu_s=0.08, transactions=11, rows=22, redis_commands=50,
        replay_bytes=2000,
    )  # fmt: skip
    size = size_ladder(measured, calls_per_match=520, heartbeat_seconds=5, ladder_in_flight=4)
    rate = 1_000_000 / (30 * 86400)
    assert size.matches_per_second == pytest.approx(rate)  # about 0.39
    assert size.match_seconds == pytest.approx(2.5 * 13)
    assert size.in_flight == pytest.approx(rate * 32.5)  # Little's law
    assert size.peak_in_flight == pytest.approx(3 * rate * 32.5)
    assert size.ladder_matches_in_flight == math.ceil(rate * 32.5)  # 13
    assert size.matches_per_month_at_current_setting == pytest.approx(4 / 32.5 * 30 * 86400)
    assert size.worker_processes == math.ceil(3 * rate * 32.5 / 16)
    assert size.cpu_cores == pytest.approx(rate * 0.08 * 13)
    assert size.transactions_per_second == pytest.approx(rate * (11 + 30 / 5))
    assert size.rows_per_second == pytest.approx(rate * (22 + 30 / 5))
    assert size.redis_commands_per_second == pytest.approx(rate * 50)
    assert size.replay_gb_per_month == pytest.approx(1_000_000 * 2000 * 13 / 1e9)
    assert size.matches_per_bot_per_day == pytest.approx(1_000_000 * 4 / 10_000 / 30)
