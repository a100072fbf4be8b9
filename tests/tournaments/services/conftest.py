"""Fixtures of the service tests: the default ladder and bots opted in to it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from tests.support.users import make_confirmed_user
from tournaments.models import Bot, BotStatus, Ladder
from tournaments.services.ladders import ladder_ensure_default


@pytest.fixture
def ladder(oh_hell) -> Ladder:
    """The oh-hell ladder, which runs by default."""
    ladder = ladder_ensure_default()
    assert ladder is not None
    return ladder


@pytest.fixture
def ladder_bots(make_bot) -> Callable[..., list[Bot]]:
    """Make ``n`` active, opted-in bots: of ``owner`` when given, else each of an owner of its
    own (the ladder never seats two bots of one owner together)."""
    owners = iter(range(1, 1_000_000))

    def make(n: int, owner: User | None = None, **fields) -> list[Bot]:
        fields.setdefault("status", BotStatus.ACTIVE)
        fields.setdefault("ladder_opt_in", True)
        return [
            make_bot(owner or make_confirmed_user(f"player-{next(owners)}"), **fields)
            for _ in range(n)
        ]

    return make
