"""A match's check of the worker's own network is built from the settings, over real sockets."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest

from arena.faults import ArenaNetworkError
from tournaments.models import MatchSeat
from tournaments.netpolicy import arena_network_check, bot_limits
from tournaments.services.matches import match_create
from tournaments.services.runs import match_play

pytestmark = pytest.mark.django_db


@pytest.fixture
def listening() -> Iterator[int]:
    """A loopback port accepting TCP connections, standing in for the broker."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


@pytest.fixture
def closed_port() -> int:
    """A loopback port nobody listens on: a connection to it is refused."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]


def test_without_redis_or_a_check_url_there_is_no_check_and_every_fault_is_charged(
    settings,
) -> None:
    settings.REDIS_URL = ""
    settings.ARENA_NETWORK_CHECK_URL = ""
    assert arena_network_check() is None


def test_the_check_connects_to_the_broker_of_redis_url(settings, listening) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{listening}/0"
    settings.ARENA_NETWORK_CHECK_URL = ""
    check = arena_network_check()
    assert check is not None and check.targets == (("127.0.0.1", listening),)
    assert asyncio.run(check()) is True


def test_the_check_fails_when_the_check_url_does_not_connect(
    settings, listening, closed_port
) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{listening}/0"
    settings.ARENA_NETWORK_CHECK_URL = f"http://127.0.0.1:{closed_port}/health"
    check = arena_network_check()
    assert check is not None
    assert check.targets == (("127.0.0.1", listening), ("127.0.0.1", closed_port))
    assert asyncio.run(check()) is False


def test_the_check_url_alone_is_checked_on_its_schemes_port(settings) -> None:
    settings.REDIS_URL = ""
    settings.ARENA_NETWORK_CHECK_URL = "https://health.example.org/up"
    settings.ARENA_NETWORK_CHECK_TIMEOUT_MS = 250
    check = arena_network_check()
    assert check is not None
    assert check.targets == (("health.example.org", 443),) and check.timeout_s == 0.25


def test_the_match_limits_carry_the_outage_wait_from_the_settings(settings) -> None:
    settings.ARENA_OUTAGE_WAIT_SECONDS = 12.5
    assert bot_limits(500).outage_wait_s == 12.5


@pytest.fixture
def silent_seat_match(playing_bots, short_variant, make_bot, owner, scripted_bot_server):
    """A match whose first seat never answers in time, beside three bots that do."""
    slow = make_bot(owner, endpoint_url=f"{scripted_bot_server}/slow", status="active")
    return match_create(
        variant_id=short_variant.pk,
        bot_ids=[slow.pk, *(b.pk for b in playing_bots(3))],
        seed=5,
        time_limit_ms=300,
    )


def test_a_match_charges_a_timeout_while_the_broker_connects(
    settings, silent_seat_match, listening
) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{listening}/0"
    settings.ARENA_NETWORK_CHECK_URL = ""
    outcome = match_play(match_id=silent_seat_match.pk)
    slow = outcome.seats[0]
    assert slow.stats.faults.keys() == {"timeout"} and slow.stats.disqualified
    assert all(s.stats.fault_count == 0 for s in outcome.seats[1:])


def test_a_match_is_abandoned_not_charged_while_the_check_url_fails(
    settings, silent_seat_match, listening, closed_port
) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{listening}/0"
    settings.ARENA_NETWORK_CHECK_URL = f"http://127.0.0.1:{closed_port}/health"
    settings.ARENA_OUTAGE_WAIT_SECONDS = 1.0
    with pytest.raises(ArenaNetworkError, match="network is down"):
        match_play(match_id=silent_seat_match.pk)
    assert not MatchSeat.objects.filter(match=silent_seat_match, faults__gt=0).exists()
