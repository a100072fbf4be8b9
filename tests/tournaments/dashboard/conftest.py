"""Fixtures for the dashboard tests: a populated world of bots, matches and ratings."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tests.tournaments.dashboard.world import World, build_world


@pytest.fixture
def world(db) -> World:
    """A running tournament with 8 bots, 12 finished and rated matches and 4 queued."""
    owners = [
        User.objects.create_user(username=name, password="a-long-test-passphrase-42")
        for name in ("ada", "brian")
    ]
    return build_world(owners=owners)
