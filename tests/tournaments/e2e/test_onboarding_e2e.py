"""A new bot author's first steps in Chromium, end to end, with real workers and a real bot.

The README's quick start for bot authors, walked as a person would: the author starts the
starter bot (examples/starter_bot.py, a real HTTP server on loopback), signs up, confirms the
email address through the link the worker mailed (written to a folder by Django's file
backend), registers the bot, copies the secret, restarts the bot with it, verifies it (a real
Celery worker calls the bot), opts it into the ladder and sees its first rated ladder match on
its page. Celery beat and the worker run as real processes; three bots of other owners are
already on the ladder. Nothing is done for the author behind the pages' back: no staff action,
no task called by the test.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.support.browser import find_chromium, missing_reason
from tests.support.users import ladder_teams_apart
from tests.support.workers import wait_for
from tournaments.models import Bot, Match, MatchStatus
from tournaments.services.ladders import ladder_ensure_default

CHROMIUM = find_chromium()
if CHROMIUM is None:
    pytest.skip(missing_reason(), allow_module_level=True)

# The live server runs in a thread of this process while Playwright's sync API holds an event
# loop; Django would otherwise refuse database calls from the test thread.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

ROOT = Path(__file__).resolve().parents[3]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# What the author is promised: the first rated ladder match within a minute of opting in.
FIRST_MATCH_SECONDS = 60

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.REDIS_URL or connection.vendor == "sqlite",
        reason="needs PostgreSQL and Redis for the worker processes: set DATABASE_URL and "
        "REDIS_URL (./run test does when they answer on 127.0.0.1)",
    ),
]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


class StarterBot:
    """examples/starter_bot.py on a free loopback port, restartable with a secret."""

    def __init__(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self, secret: str | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if k != "OHHELL_SECRET"}
        if secret is not None:
            env["OHHELL_SECRET"] = secret
        self.process = subprocess.Popen(
            [sys.executable, "examples/starter_bot.py", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for(lambda: listening(self.port), 30, "the starter bot to listen")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=30)
        wait_for(lambda: not listening(self.port), 30, "the starter bot to stop")


@pytest.fixture
def starter() -> Iterator[StarterBot]:
    bot = StarterBot()
    yield bot
    bot.stop()


@pytest.fixture
def rivals(make_bot, other_user, example_bots, oh_hell) -> list[Bot]:
    """Three active bots of other owners, already on the ladder (a table needs four)."""
    # The oh-hell ladder as a fresh database has it (a transactional test before may flush it).
    ladder_ensure_default()
    bots = [
        make_bot(
            other_user,
            endpoint_url=f"{example_bots.urls[player]}/rival{i}",
            status="active",
            ladder_opt_in=True,
        )
        for i, player in enumerate(("heuristic", "random", "heuristic"))
    ]
    ladder_teams_apart(bots)
    return bots


@pytest.fixture
def mailbox(tmp_path: Path) -> Path:
    """Where the worker writes the mail it sends, a file a message."""
    return tmp_path / "mail"


@pytest.fixture
def workers(start_worker, loopback_allowed, mailbox) -> None:
    """A worker on every queue and Celery beat, as a deployment (or ./run) runs them."""
    mail = {"EMAIL_BACKEND": "file", "EMAIL_FILE_PATH": str(mailbox)}
    start_worker("onboarding", concurrency=2, env=mail)
    start_worker("onboarding-beat", beat=True)


def mailed_link(mailbox: Path) -> str:
    """The path of the confirmation link in the one message the worker wrote."""

    def written() -> list[Path]:
        return sorted(mailbox.glob("*.log")) if mailbox.exists() else []

    wait_for(lambda: bool(written()), 60, "the confirmation mail")
    (message,) = written()
    found = re.search(r"https?://[^/\s]+(/confirm-email/[^/\s]+/)", message.read_text())
    assert found, message.read_text()
    return found.group(1)


@pytest.fixture
def page(live_server) -> Iterator[object]:
    """A page in headless Chromium that fails the test on a script error or a failed request."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None
        )
        yield page
        page.goto("about:blank")  # stop any polling before the live server goes away
        browser.close()
        assert not errors, f"errors in the page: {errors}"


def shoot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_a_new_author_walks_from_sign_up_to_a_first_rated_ladder_match(
    live_server, page, starter, rivals, workers, mailbox
) -> None:
    site = live_server.url
    # 1. Start the bot: no secret yet, so it answers anything.
    starter.start()

    # The home page leads to "Write a bot", which spells the first steps out in order.
    page.goto(f"{site}/")
    page.get_by_role("link", name="Write a bot").first.click()
    page.wait_for_url("**/write-a-bot/")
    steps = page.locator("ol.steps > li > strong").all_inner_texts()
    assert [s.split()[0] for s in steps] == [
        "Start",
        "Register",
        "Copy",
        "Restart",
        "Verify",
        "Practise",
        "Opt",
    ]

    page.get_by_role("link", name="Sign up").first.click()
    page.get_by_label("Username").fill("first-author")
    page.get_by_label("Email").fill("first-author@example.org")
    page.get_by_label("Password").fill("plenty-long-pass-99")
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url("**/my/bots/")
    assert "confirm your email address" in page.locator("main").inner_text()

    # Confirm the address: the ladders seat bots of confirmed accounts only.
    page.goto(f"{site}{mailed_link(mailbox)}")
    page.get_by_role("button", name="Confirm my email address").click()
    assert "is confirmed" in page.locator("main").inner_text()
    page.get_by_role("link", name="My bots").last.click()
    page.wait_for_url("**/my/bots/")

    # 2. Register it.
    page.get_by_label("Name").fill("my-starter")
    page.get_by_label("Endpoint URL").fill(starter.url)
    page.get_by_role("button", name="Register").click()
    page.wait_for_url("**/my/bots/*/")
    bot = Bot.objects.get(name="my-starter")
    assert bot.owner.username == "first-author" and not bot.ladder_opt_in

    # 3. Copy the secret, shown once.
    secret = page.locator("#secret").input_value()
    assert secret == bot.secret
    shoot(page, "onboarding-secret")

    # 4. Restart the bot with it: from now on it refuses requests the platform did not sign.
    starter.stop()
    starter.start(secret)
    unsigned = urllib.request.Request(starter.url, data=b'{"type": "hello"}', method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(unsigned, timeout=10)
    assert refused.value.code == 401

    # 5. Verify: the page shows the check pending, then its result, without a reload.
    page.reload()
    assert page.locator("#secret").count() == 0  # shown once only
    page.get_by_role("button", name="Verify now").click()
    page.wait_for_selector('#check-result[data-status="ok"]', timeout=60_000)
    assert "Passed in" in page.locator("#check-result").inner_text()
    # The badge is updated from the bot's record once the check's result is shown.
    page.wait_for_selector("#bot-status.status-active", timeout=60_000)
    assert page.locator("#bot-status").inner_text() == "active"

    # 6. Opt into the ladder, then watch the bot's public page.
    page.get_by_role("button", name="Opt into the ladder").click()
    opted_in = time.monotonic()
    assert "on the ladder" in page.locator("form.ladder").inner_text()
    page.get_by_role("link", name="ratings and matches").click()
    page.wait_for_url(f"**/bots/{bot.pk}/")
    ratings = page.locator("section", has=page.get_by_role("heading", name="Ratings"))

    def rated_on_the_page() -> bool:
        page.reload()
        return ratings.get_by_role("link", name="oh-hell").count() > 0

    wait_for(rated_on_the_page, 3 * FIRST_MATCH_SECONDS, "a rated match on the bot's page")
    waited = time.monotonic() - opted_in
    shoot(page, "onboarding-first-match")
    print(f"first rated ladder match on the page {waited:.1f} s after opting in")
    assert waited <= FIRST_MATCH_SECONDS, f"the first rated match took {waited:.0f} s"

    # It was a ladder match, played with the secret: signed requests answered without a fault.
    played = Match.objects.filter(seats__bot=bot, rated=True)
    assert played.exists() and not played.filter(ladder__isnull=True).exists()
    assert all(m.status == MatchStatus.FINISHED for m in played)
    assert not played.filter(seats__bot=bot, seats__faults__gt=0).exists()
    recent = page.locator("section", has=page.get_by_role("heading", name="Recent matches"))
    assert recent.locator(".status-finished").count() >= 1
