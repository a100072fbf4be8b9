"""Fixtures for the dashboard tests: the presets, and a populated world of bots and matches."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tests.support.world import World, build_world


@pytest.fixture(autouse=True)
def _presets(presets) -> None:
    """Store the presets even when an earlier transactional test flushed the migration's rows."""


@pytest.fixture
def world(db) -> World:
    """A running tournament with 8 bots, 12 finished and rated matches and 4 queued."""
    owners = [
        User.objects.create_user(username=name, password="a-long-test-passphrase-42")
        for name in ("ada", "brian")
    ]
    return build_world(owners=owners)
