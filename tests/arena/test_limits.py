"""Limits: one frozen value with the time rules of the protocol."""

from __future__ import annotations

import dataclasses
import math

import pytest

from arena.limits import Limits


def test_bids_get_twice_the_time_of_a_play() -> None:
    limits = Limits(time_limit_ms=400)

    assert limits.time_limit_for("play") == 400
    assert limits.time_limit_for("bid") == 800
    assert limits.time_limit_for("result") == 400


def test_hello_has_its_own_time_limit() -> None:
    assert Limits(hello_time_limit_ms=2500).time_limit_for("hello") == 2500


def test_a_call_is_cut_at_the_time_limit_plus_a_fixed_grace() -> None:
    assert Limits(grace_ms=100).deadline_s(400) == pytest.approx(0.5)


def test_limits_cannot_be_changed_in_place() -> None:
    limits = Limits()

    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.time_limit_ms = 5  # type: ignore[misc]


def test_a_tournament_time_control_gives_new_limits() -> None:
    limits = Limits(time_limit_ms=1000).with_time_limit(200)

    assert limits.time_limit_ms == 200
    assert limits.time_limit_for("bid") == 400


@pytest.mark.parametrize(
    "bad",
    [
        {"time_limit_ms": 0},
        {"grace_ms": -1},
        {"max_response_bytes": 0},
        {"max_connections": 0},
        {"outage_wait_s": -1.0},
        {"outage_wait_s": math.nan},
        {"outage_wait_s": math.inf},
    ],
)
def test_nonsensical_limits_are_refused_with_the_option_named(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        Limits(**bad)  # type: ignore[arg-type]


def test_equal_limits_are_one_key_so_a_worker_keeps_one_client_for_them() -> None:
    clients = {Limits(outage_wait_s=5.0): "client"}

    assert clients[Limits(outage_wait_s=5.0)] == "client"
    assert Limits(outage_wait_s=6.0) not in clients
