"""Shared fixtures: the fixed cast of users and API clients, and row factories."""

from __future__ import annotations

import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from tests.support.users import client_for, make_confirmed_user
from tournaments.models import ORGANISERS_GROUP, Bot, Variant
from tournaments.services.variants import variants_seed_presets


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    """Hash test passwords cheaply: the real hasher costs a third of a second per user."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def owner(db) -> User:
    """A bot author whose email address is confirmed, as every fixed user's is: their bots may
    play on the ladders (tests/support/users.py makes unconfirmed ones too)."""
    return make_confirmed_user("owner")


@pytest.fixture
def other_user(db) -> User:
    return make_confirmed_user("other")


@pytest.fixture(autouse=True)
def leaderboard_pages_replaced_at_once(settings) -> None:
    """Tests read the leaderboard right after writing ratings, and the cache outlives a test:
    no page is served past a rating write (tests of the stale window set their own), and none
    this process kept from an earlier test's database. A cache in this process's memory starts
    empty too: on SQLite a rolled-back test's ids come again, and a bot's history pages are
    keyed by its id."""
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    from tournaments.api.page_cache import RECENT_PAGES

    settings.LEADERBOARD_STALE_SECONDS = 0
    RECENT_PAGES.forget()
    if isinstance(caches["default"], LocMemCache):
        caches["default"].clear()


@pytest.fixture
def staff(db) -> User:
    return make_confirmed_user("staff", is_staff=True, is_superuser=True)


@pytest.fixture
def organiser(db) -> User:
    user = make_confirmed_user("organiser")
    # get_or_create: a transactional test before this one may have flushed the migration's rows.
    user.groups.add(Group.objects.get_or_create(name=ORGANISERS_GROUP)[0])
    return user


@pytest.fixture
def anonymous_client(db) -> APIClient:
    return client_for(None)


@pytest.fixture
def owner_client(owner) -> APIClient:
    return client_for(owner)


@pytest.fixture
def other_client(other_user) -> APIClient:
    return client_for(other_user)


@pytest.fixture
def staff_client(staff) -> APIClient:
    return client_for(staff)


@pytest.fixture
def organiser_client(organiser) -> APIClient:
    return client_for(organiser)


@pytest.fixture
def make_bot(db) -> Callable[..., Bot]:
    """Create bots directly in the database, skipping the endpoint checks of registration."""
    counter = iter(range(1, 1_000_000))

    def make(owner: User, **fields) -> Bot:
        n = next(counter)
        fields.setdefault("name", f"bot-{n}")
        fields.setdefault("endpoint_url", f"https://bot{n}.example.org/play")
        fields.setdefault("secret", f"secret-{n}")
        return Bot.objects.create(owner=owner, **fields)

    return make


@pytest.fixture
def bot(make_bot, owner) -> Bot:
    return make_bot(owner, name="owned-bot")


@pytest.fixture
def presets(db) -> None:
    """The engine's presets in the database (the migration stores them, a flush removes them)."""
    variants_seed_presets()


@pytest.fixture
def oh_hell(presets) -> Variant:
    """The oh-hell preset."""
    return Variant.objects.get(name="oh-hell")


# Ports of the private Redis servers tests start and kill (a range no shared server uses).
PRIVATE_REDIS_PORTS = range(16500, 16600)


@dataclass
class RedisServer:
    """A redis-server of the test's own, to kill and start again on the same port."""

    port: int
    workdir: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.workdir)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            assert self.process.poll() is None, "redis-server exited at start"
            assert time.monotonic() < deadline, "redis-server did not answer in 30 s"
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL the server, as a crash would, and wait until it is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
        self.process = None


def _free_private_port() -> int:
    # In random order: a port freed while its server is killed for an outage test is not the
    # first one another test run on this machine would take.
    for port in random.sample(PRIVATE_REDIS_PORTS, len(PRIVATE_REDIS_PORTS)):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port for a private redis-server")


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A running redis-server of this test's own; killed at the end."""
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is needed on the PATH for the broker and cache outage tests")
    server = RedisServer(port=_free_private_port(), workdir=tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()
