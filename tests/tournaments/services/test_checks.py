"""Queued checks wait in their owner's backlog, a few handed to the workers at a time, and an
owner may ask for so many an hour; the periodic health check calls one owner's bots a few at a
time. Real HTTP bots on loopback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tests.support.pages import signed_in
from tests.support.users import client_for, make_user
from tournaments.models import Bot, BotHealthCheck, BotStatus
from tournaments.services.bots import bot_complete_check, bot_verify_request, bots_check_health
from tournaments.services.checks import checks_send_all_waiting


@pytest.fixture
def ok_bots(make_bot, scripted_bot_server, loopback_allowed):
    """Make ``n`` bots of ``owner`` that answer every request."""

    def make(owner: User, n: int) -> list[Bot]:
        return [make_bot(owner, endpoint_url=f"{scripted_bot_server}/ok") for _ in range(n)]

    return make


def sent(check: BotHealthCheck) -> bool:
    check.refresh_from_db()
    return check.sent_at is not None


def test_an_owners_checks_past_its_places_wait_and_are_sent_oldest_first_as_others_complete(
    ok_bots, owner, other_user, settings, django_capture_on_commit_callbacks
) -> None:
    settings.CHECKS_IN_FLIGHT_PER_OWNER = 2
    flood = ok_bots(owner, 4)
    (other,) = ok_bots(other_user, 1)
    with django_capture_on_commit_callbacks() as asked:
        checks = [bot_verify_request(bot=bot) for bot in flood]
        other_check = bot_verify_request(bot=other)
    # Two of the owner's four go to the workers; the other owner's is not behind the rest.
    assert len(asked) == 3
    assert [sent(c) for c in checks] == [True, True, False, False]
    assert sent(other_check)

    # One completes: the owner's oldest waiting check takes its place.
    with django_capture_on_commit_callbacks() as next_sent:
        assert bot_complete_check(check_id=checks[0].pk) == "ok"
    assert len(next_sent) == 1
    assert [sent(c) for c in checks] == [True, True, True, False]
    # The sweep has nothing to send while the owner's places are taken.
    with django_capture_on_commit_callbacks() as swept:
        assert checks_send_all_waiting() == 0
    assert swept == []


def test_a_sent_check_not_completed_in_time_frees_its_place_and_the_sweep_sends_it_again(
    ok_bots, owner, settings, django_capture_on_commit_callbacks
) -> None:
    settings.CHECKS_IN_FLIGHT_PER_OWNER = 1
    settings.BOT_VERIFY_RESEND_S = 5
    first, second = (bot_verify_request(bot=bot) for bot in ok_bots(owner, 2))
    assert sent(first) and not sent(second)
    # Its message lost: after BOT_VERIFY_RESEND_S it holds no place and is sent again first.
    BotHealthCheck.objects.filter(pk=first.pk).update(sent_at=timezone.now() - timedelta(seconds=6))
    with django_capture_on_commit_callbacks() as swept:
        assert checks_send_all_waiting() == 1
    assert len(swept) == 1
    first.refresh_from_db()
    assert first.sent_at is not None and first.sent_at > timezone.now() - timedelta(seconds=5)
    assert not sent(second)


def test_an_owner_asking_for_more_checks_than_its_hourly_allowance_is_answered_429(
    ok_bots, owner, settings, scripted_bot_server
) -> None:
    settings.CHECK_REQUESTS_PER_HOUR = 2
    bots = ok_bots(owner, 3)
    client = client_for(owner)
    for bot in bots[:2]:
        assert client.post(f"/api/bots/{bot.pk}/verify/").status_code == 202
    # Asking again for a pending check costs nothing.
    assert client.post(f"/api/bots/{bots[0].pk}/verify/").status_code == 202
    refused = client.post(f"/api/bots/{bots[2].pk}/verify/")
    assert refused.status_code == 429
    wait = int(refused["Retry-After"])
    assert 1 <= wait <= 3601
    error = refused.json()["error"]
    assert error["code"] == "throttled" and error["retry_after"] == wait
    assert "2 verifications an hour" in error["message"]
    assert not BotHealthCheck.objects.filter(bot=bots[2]).exists()
    # A registration is a verification too; the page's button is refused alike.
    registered = client.post(
        "/api/bots/",
        {"name": "one-more", "endpoint_url": f"{scripted_bot_server}/ok"},
        format="json",
    )
    assert registered.status_code == 429 and registered.has_header("Retry-After")
    assert not Bot.objects.filter(name="one-more").exists()
    page = signed_in(owner).post(f"/my/bots/{bots[2].pk}/verify/")
    assert page.status_code == 429 and page.has_header("Retry-After")
    # Another owner's allowance is its own; staff are not counted.
    (other,) = ok_bots(make_user("third"), 1)
    assert client_for(other.owner).post(f"/api/bots/{other.pk}/verify/").status_code == 202
    staff = make_user("staff-owner", is_staff=True)
    for bot in ok_bots(staff, 3):
        assert client_for(staff).post(f"/api/bots/{bot.pk}/verify/").status_code == 202


class CountingBots:
    """Bots at ``/<owner>/<n>`` whose hello waits for a third call of the same owner (or
    0.4 s); records the most calls of one owner in flight at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight: dict[str, int] = {}
        self.most: dict[str, int] = {}
        self.crowded: dict[str, threading.Event] = {}
        counting = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner = self.path.split("/")[1]
                with counting.lock:
                    now = counting.in_flight.get(owner, 0) + 1
                    counting.in_flight[owner] = now
                    counting.most[owner] = max(counting.most.get(owner, 0), now)
                    crowded = counting.crowded.setdefault(owner, threading.Event())
                    if now >= 3:
                        crowded.set()
                crowded.wait(timeout=0.4)
                body = json.dumps({"name": "counted"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with counting.lock:
                    counting.in_flight[owner] -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def counting_bots() -> Iterator[CountingBots]:
    bots = CountingBots()
    thread = threading.Thread(target=bots.server.serve_forever, daemon=True)
    thread.start()
    yield bots
    bots.server.shutdown()
    bots.server.server_close()


def test_the_health_check_calls_at_most_a_few_of_one_owners_bots_at_once(
    make_bot, owner, other_user, counting_bots, settings, loopback_allowed
) -> None:
    settings.CHECKS_IN_FLIGHT_PER_OWNER = 2
    for n in range(6):
        make_bot(owner, endpoint_url=f"{counting_bots.base}/a/{n}", status=BotStatus.ACTIVE)
    make_bot(other_user, endpoint_url=f"{counting_bots.base}/b/0", status=BotStatus.ACTIVE)
    assert bots_check_health() == {"checked": 7, "ok": 7, "failed": 0}
    assert counting_bots.most == {"a": 2, "b": 1}
    assert BotHealthCheck.objects.filter(ok=True).count() == 7
