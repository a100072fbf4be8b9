"""Verification is fair between owners, with real Celery workers: one owner asking for many
slow checks delays only its own, never another owner's.

One HTTP server plays every bot, each at a path of its own. The flood's bots hold their
``hello`` (as slow bots do, under the timeout) until the other owner's bot has been called;
the other owner's bot records, when its first call arrives, how many of the flood's bots had
been called already. Queued first come, first served, every one of the flood's checks would be
in front of it; queued per owner, at most CHECKS_IN_FLIGHT_PER_OWNER are.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.conf import settings

from tests.support.users import client_for
from tests.support.workers import needs_postgres_and_redis, wait_for
from tournaments.models import Bot, BotHealthCheck, BotStatus

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]

FLOOD = 12
# A slow bot's hello that still passes: under the workers' hello timeout, set long here so the
# flood's held calls outlast any delay of a loaded machine.
SLOW_HELLO_S = 15
HELLO_TIMEOUT_MS = 20_000


class Bots:
    """Every bot of the test behind one server: ``/flood/<n>`` and ``/other``."""

    def __init__(self) -> None:
        self.other_called = threading.Event()
        self.flood_called: set[str] = set()
        self.flood_called_before_other: int | None = None
        self.lock = threading.Lock()
        bots = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with bots.lock:
                    first = self.path not in bots.flood_called
                    if self.path.startswith("/flood/"):
                        bots.flood_called.add(self.path)
                    elif not bots.other_called.is_set():
                        bots.flood_called_before_other = len(bots.flood_called)
                        bots.other_called.set()
                if first and self.path.startswith("/flood/"):
                    bots.other_called.wait(timeout=SLOW_HELLO_S)
                body = json.dumps({"name": "bot"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def bots() -> Iterator[Bots]:
    served = Bots()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    yield served
    served.other_called.set()
    served.server.shutdown()
    served.server.server_close()


def test_one_owners_flood_of_slow_checks_never_delays_another_owners_verification(
    start_worker, make_bot, owner, other_user, bots, loopback_allowed
) -> None:
    flood = [make_bot(owner, endpoint_url=f"{bots.base}/flood/{n}") for n in range(FLOOD)]
    other = make_bot(other_user, endpoint_url=f"{bots.base}/other")
    start_worker("checks", concurrency=4, env={"BOT_HELLO_TIMEOUT_MS": str(HELLO_TIMEOUT_MS)})
    flooder = client_for(owner)
    for bot in flood:
        assert flooder.post(f"/api/bots/{bot.pk}/verify/").status_code == 202
    response = client_for(other_user).post(f"/api/bots/{other.pk}/verify/")
    assert response.status_code == 202
    poll = response["Location"]

    wait_for(
        lambda: client_for(other_user).get(poll).json()["status"] != "pending",
        120,
        "the other owner's check",
    )
    assert client_for(other_user).get(poll).json()["status"] == "ok"
    # When the other owner's bot was called, only the flood's checks in flight had started.
    assert bots.flood_called_before_other is not None
    assert bots.flood_called_before_other <= settings.CHECKS_IN_FLIGHT_PER_OWNER

    # The flood's own backlog drains as its checks complete.
    wait_for(
        lambda: not BotHealthCheck.objects.filter(ok__isnull=True).exists(),
        120,
        "the flood's checks",
    )
    assert set(Bot.objects.filter(owner=owner).values_list("status", flat=True)) == {
        BotStatus.ACTIVE
    }
