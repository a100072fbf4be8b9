"""Verification through the API with a real Celery worker: the web request never waits on a bot.

The bot holds its answer until the test has received the API's answer; it records whether the
API had already answered when the worker's call reached it. Verified synchronously, the request
would still be open when the bot is called, so the record proves the order of events.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.users import client_for
from tests.support.workers import needs_postgres_and_redis, wait_for
from tournaments.models import BotStatus

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]


class PatientBot:
    """A bot that answers ``hello`` only once the API has answered the test (or after 30 s)."""

    def __init__(self) -> None:
        self.api_answered = threading.Event()
        self.calls: list[bool] = []  # per call: had the API answered when the call arrived?
        patient = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                patient.calls.append(patient.api_answered.is_set())
                patient.api_answered.wait(timeout=30)
                body = json.dumps({"name": "patient"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/play"


@pytest.fixture
def patient_bot() -> Iterator[PatientBot]:
    bot = PatientBot()
    thread = threading.Thread(target=bot.server.serve_forever, daemon=True)
    thread.start()
    yield bot
    bot.api_answered.set()
    bot.server.shutdown()
    bot.server.server_close()


def test_verify_answers_before_the_bot_is_called_and_a_worker_completes_the_check(
    start_worker, make_bot, owner, patient_bot, loopback_allowed
) -> None:
    bot = make_bot(owner, endpoint_url=patient_bot.url)
    start_worker("verifier", concurrency=1)
    client = client_for(owner)
    response = client.post(f"/api/bots/{bot.pk}/verify/")
    patient_bot.api_answered.set()
    assert response.status_code == 202 and response.json()["status"] == "pending"
    poll = response["Location"]
    wait_for(lambda: client.get(poll).json()["status"] != "pending", 60, "the worker's check")
    assert client.get(poll).json()["status"] == "ok"
    # The hello, then the signing probes (arena/probes.py): every one after the API answered.
    assert patient_bot.calls and all(patient_bot.calls), "the API must answer before any call"
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE
