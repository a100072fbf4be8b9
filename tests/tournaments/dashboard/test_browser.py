"""The dashboard in a real browser: Chromium, driven by Playwright, on the live server.

``./run test`` finds or installs the Chromium (tests/support/browser.py); without one this module is
skipped with one ``BROWSER TESTS SKIPPED`` line saying why.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from engine.players import make_player
from engine.presets import preset
from engine.replay import to_replay
from engine.simulate import play_game
from tests.support.browser import find_chromium, missing_reason
from tests.support.users import confirm_email
from tests.support.world import (
    World,
    build_history,
    build_world,
    play_and_record,
    played_scrimmage,
)
from tournaments.models import Bot, Rating, RatingHistory, Replay, Scrimmage, SeatFault, SeatTally
from tournaments.services.runs import match_run

CHROMIUM = find_chromium()
if CHROMIUM is None:
    pytest.skip(missing_reason(), allow_module_level=True)

# The live server runs in a thread of this process while Playwright's sync API holds an event
# loop; Django would otherwise refuse database calls from the test thread.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SCREENSHOTS = Path(__file__).resolve().parents[3] / "artifacts" / "screenshots"
# Every refusal of the page's Content-Security-Policy, handed to the test.
REPORT_POLICY_REFUSALS = """
document.addEventListener("securitypolicyviolation", (e) =>
  window.policyRefused({
    page: e.documentURI, blockedURI: e.blockedURI, directive: e.effectiveDirective,
  }));
"""

pytestmark = pytest.mark.django_db(transaction=True)
# What a chart's legend shows for a value it does not have.
NO_VALUE = "\N{EN DASH}"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless Chromium for the whole session."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator[object]:
    """A fresh page on the live server that fails the test on a script error, a missing file or
    a refusal of the page's policy. The site's policy allows no eval: a condition to wait for is
    passed as a function ("() => ..."), which Playwright calls without eval."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server.url)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    off_site: set[str] = set()
    blocked: set[str] = set()

    def failed(request) -> None:
        if request.failure == "csp":
            blocked.add(request.url)  # stopped by the page's policy: it never left the browser
        elif request.failure != "net::ERR_ABORTED":  # a poll cut short by leaving the page
            errors.append(f"failed {request.url}: {request.failure}")

    page.on("requestfailed", failed)

    def refused(violation: dict[str, str]) -> None:
        # Something on this server the page's policy stopped (an inline script or style, a
        # worker, a file): the page depends on it. Off-site loads it stops are the blocked above.
        url = violation["blockedURI"]
        if not url.startswith(("http", "ws")) or url.startswith(live_server.url):
            what = f"{url or 'inline'} ({violation['directive']})"
            errors.append(f"{violation['page']}: the policy refused {what}")

    context.expose_function("policyRefused", refused)
    context.add_init_script(REPORT_POLICY_REFUSALS)
    page.on(
        "request",
        lambda r: (
            off_site.add(r.url)
            if not r.url.startswith((live_server.url, "data:", "blob:", "about:"))
            else None
        ),
    )
    page.on(
        "response",
        lambda r: (
            errors.append(f"{r.status} {r.url}")
            if r.status >= 400 and r.request.resource_type != "document"
            else None
        ),
    )
    yield page
    page.goto("about:blank")  # stop any polling before the live server goes away
    context.close()
    errors.extend(f"off-site request {url}" for url in sorted(off_site - blocked))
    assert not errors, f"errors in the page: {errors}"


@pytest.fixture
def world(transactional_db) -> World:
    """A running tournament with 8 bots, 12 finished and rated matches and 4 queued."""
    owners = [
        User.objects.create_user(username=name, password="a-long-test-passphrase-42")
        for name in ("ada", "brian")
    ]
    return build_world(owners=owners)


def shoot(page, name: str) -> None:
    """Save a full-page screenshot as a test artefact."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_the_leaderboard_lists_bots_in_rating_order(page, world) -> None:
    page.goto(f"/leaderboard/{world.variant.name}/")
    shown = page.locator("table.leaderboard tbody .bot-name").all_inner_texts()
    expected = list(
        Rating.objects.filter(variant=world.variant)
        .order_by("-conservative", "bot__name")
        .values_list("bot__name", flat=True)
    )
    assert shown == expected and len(shown) == len(world.bots)
    ratings = [float(t) for t in page.locator("td.rating").all_inner_texts()]
    assert ratings == sorted(ratings, reverse=True)
    shoot(page, "leaderboard")


def test_progress_fixtures_and_standings_follow_finished_matches_without_a_reload(
    page, world
) -> None:
    page.goto(f"/tournaments/{world.tournament.pk}/")
    page.evaluate("window.loadedOnce = true")
    bar = page.locator("#progress-bar")
    values = [bar.evaluate("el => el.value")]
    assert values[0] == len(world.finished)
    for match in world.queued[:2]:
        row = page.locator(f'#fixtures tr:has(a[href="/matches/{match.pk}/"]) .status')
        assert row.inner_text() == "queued"
        play_and_record(match)
        page.wait_for_function(
            f"() => document.getElementById('progress-bar').value > {values[-1]}", timeout=10_000
        )
        values.append(bar.evaluate("el => el.value"))
        row.filter(has_text="finished").wait_for(timeout=10_000)
    assert values == [len(world.finished), len(world.finished) + 1, len(world.finished) + 2]
    assert page.evaluate("window.loadedOnce") is True  # the same page, never reloaded
    assert page.locator('[data-field="finished"]').inner_text() == str(values[-1])
    played = sum(int(t) for t in page.locator("#standings tbody td:nth-child(3)").all_inner_texts())
    assert played == (len(world.finished) + 2) * world.tournament.table_size
    shoot(page, "tournament")


def open_replay(page: Any, match_id: int) -> Any:
    """Open a match page and wait for its viewer to load the replay it fetches after the page."""
    page.goto(f"/matches/{match_id}/")
    viewer = page.locator('#replay[data-loaded="true"]')
    viewer.wait_for(timeout=15_000)
    return viewer


def test_the_replay_viewer_steps_through_every_trick_of_a_deal_and_names_each_winner(
    page, world
) -> None:
    match = world.finished[1]
    replay = Replay.objects.get(match=match).data
    names = [s.bot.name for s in match.seats.select_related("bot").order_by("seat")]
    viewer = open_replay(page, match.pk)
    viewer.focus()
    for number in (1, 2):
        deal = replay["deals"][number - 1]
        assert viewer.get_attribute("data-deal") == str(number)
        assert viewer.get_attribute("data-trick") == "0"
        for k, trick in enumerate(deal["tricks"], start=1):
            page.keyboard.press("ArrowRight")
            assert viewer.get_attribute("data-trick") == str(k)
            winner = page.locator(".trick-winner")
            assert winner.get_attribute("data-winner") == str(trick["winner"])
            assert winner.inner_text() == f"Won by {names[trick['winner']]}"
            shown = page.locator(".trick-info .card").evaluate_all(
                "cards => cards.map(c => c.dataset.card)"
            )
            assert shown == trick["cards"]
            won = page.locator(".seat.won").get_attribute("data-seat")
            assert won == str(trick["winner"])
            if number == 1 and k == 2:
                shoot(page, "match-replay")
        page.keyboard.press("ArrowRight")  # past the last trick: the next deal begins
    page.keyboard.press("End")
    assert viewer.get_attribute("data-deal") == str(len(replay["deals"]))
    page.keyboard.press("Home")
    assert (viewer.get_attribute("data-deal"), viewer.get_attribute("data-trick")) == ("1", "0")
    page.keyboard.press("PageDown")
    assert viewer.get_attribute("data-deal") == "2"
    page.keyboard.press("ArrowUp")
    assert viewer.get_attribute("data-deal") == "1"
    page.select_option('[data-act="speed"]', "400")
    page.keyboard.press(" ")
    page.wait_for_function(
        "() => document.getElementById('replay').dataset.trick >= '2'", timeout=5000
    )
    page.keyboard.press(" ")
    assert viewer.get_attribute("data-playing") == "false"


def test_a_bot_page_draws_its_rating_chart(page, world) -> None:
    bot = world.bots[0]
    page.goto(f"/bots/{bot.pk}/")
    canvas = page.locator("figure[data-chart] canvas")
    canvas.wait_for()
    box = canvas.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 100
    legend = page.locator("figure[data-chart] .u-legend").inner_text()
    assert "(latest)" in legend and NO_VALUE not in legend, legend
    shoot(page, "bot")


@dataclass(frozen=True)
class SitePage:
    """One page of the site, as the browser tests visit it."""

    name: str
    path: Callable[[World], str]
    status: int = 200
    signed_in: bool = False


# Every page of the site. Add a page here when you add one to the site: each is checked at a
# laptop's and a phone's width for a sideways scroll, a failed request and a script error.
PAGES = [
    SitePage("home", lambda w: "/"),
    SitePage("leaderboard", lambda w: f"/leaderboard/{w.variant.name}/"),
    SitePage("bots", lambda w: "/bots/"),
    SitePage("bot", lambda w: f"/bots/{w.bots[0].pk}/"),
    SitePage("tournaments", lambda w: "/tournaments/"),
    SitePage("tournament", lambda w: f"/tournaments/{w.tournament.pk}/"),
    SitePage("matches", lambda w: "/matches/"),
    SitePage("matches-with-a-fault", lambda w: f"/matches/?bot={faulty_bot(w)}&fault=timeout"),
    SitePage("match", lambda w: f"/matches/{w.finished[0].pk}/"),
    SitePage("match-queued", lambda w: f"/matches/{w.queued[-1].pk}/"),
    SitePage("variants", lambda w: "/variants/"),
    SitePage("variant", lambda w: f"/variants/{w.variant.name}/"),
    SitePage("write-a-bot", lambda w: "/write-a-bot/"),
    SitePage("sign-up", lambda w: "/signup/"),
    SitePage("sign-in", lambda w: "/signin/"),
    SitePage("password-reset", lambda w: "/password-reset/"),
    SitePage("password-reset-sent", lambda w: "/password-reset/sent/"),
    SitePage("password-reset-link-used", lambda w: "/password-reset/MQ/set-password/"),
    SitePage("password-reset-done", lambda w: "/password-reset/done/"),
    SitePage("not-found", lambda w: "/bots/999999/", status=404),
    SitePage("api-docs", lambda w: "/api/docs/"),
    SitePage("api-redoc", lambda w: "/api/redoc/"),
    SitePage("api-root", lambda w: "/api/"),
    SitePage("api-bots", lambda w: "/api/bots/"),
    SitePage("api-bot", lambda w: f"/api/bots/{w.bots[0].pk}/"),
    SitePage("my-bots", lambda w: "/my/bots/", signed_in=True),
    SitePage("my-bot", lambda w: f"/my/bots/{w.bots[0].pk}/", signed_in=True),
    SitePage("my-bot-practice", lambda w: f"/my/bots/{w.bots[0].pk}/practice/", signed_in=True),
    SitePage("my-scrimmage", lambda w: f"/my/scrimmages/{played_scrimmage(w).pk}/", signed_in=True),
    SitePage("account", lambda w: "/my/account/", signed_in=True),
    SitePage("account-password", lambda w: "/my/account/password/", signed_in=True),
    SitePage("api-signed-in", lambda w: "/api/bots/?mine=true", signed_in=True),
]


def faulty_bot(world: World) -> int:
    """A bot of the world with a timeout fault."""
    return SeatFault.objects.filter(kind="timeout").values_list("seat__bot_id", flat=True)[0]


# Every table's right edge, so that a table cut off inside a narrower box is caught too.
WIDEST_TABLE = (
    "Math.max(0, ...[...document.querySelectorAll('table')]"
    ".map(t => t.getBoundingClientRect().right))"
)


# The bot names and status labels in tables that wrap onto a second line (a name like bot-0001
# breaks at its hyphen, "finished" anywhere, when a cell allows it): each should stay whole.
WRAPPED_NAMES = """
[...document.querySelectorAll('table a[href^="/bots/"], table .status')]
  .filter(e => e.firstChild && e.firstChild.nodeType === Node.TEXT_NODE)
  .filter(e => {
    const range = document.createRange();
    range.selectNodeContents(e.firstChild);  // the name's own text, not the score after it
    return new Set([...range.getClientRects()].map(r => Math.round(r.bottom))).size > 1;
  })
  .map(e => e.firstChild.textContent)
"""
# The longest name a bot may have (64 characters).
LONG_NAME = "a-bot-whose-author-chose-the-longest-name-allowed-0123456789abcd"


def sign_in(page, username: str) -> None:
    page.goto("/signin/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("a-long-test-passphrase-42")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/my/bots/")


@pytest.mark.parametrize("width", [1366, 390])
def test_every_page_fits_the_screen_and_loads_everything_from_this_server(
    page, world, width
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    Bot.objects.filter(pk=world.bots[1].pk).update(name=LONG_NAME)
    for site_page in sorted(PAGES, key=lambda p: p.signed_in):
        if site_page.signed_in and "sessionid" not in str(page.context.cookies()):
            sign_in(page, world.bots[0].owner.username)
        path = site_page.path(world)
        response = page.goto(path)
        page.wait_for_load_state("networkidle")
        assert response.status == site_page.status, path
        assert "script-src 'self'" in response.headers["content-security-policy"], path
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"{path} scrolls sideways at {width} px ({scroll} px)"
        widest = page.evaluate(WIDEST_TABLE)
        assert widest <= width, f"a table of {path} runs off the screen at {width} px ({widest})"
        wrapped = page.evaluate(WRAPPED_NAMES)
        assert not wrapped, f"{path} breaks names across lines at {width} px: {wrapped}"
        shoot(page, f"{site_page.name}-{width}")
    pages_seen = {p.name for p in PAGES}
    assert len(pages_seen) == len(PAGES)


def test_a_leaderboard_chart_of_one_rated_match_spans_minutes_around_it_not_hours(
    page, world
) -> None:
    RatingHistory.objects.exclude(bot__in=world.bots[:4]).delete()
    Rating.objects.exclude(bot__in=world.bots[:4]).delete()
    first = RatingHistory.objects.order_by("sequence").first()
    assert first is not None
    RatingHistory.objects.exclude(match=first.match).delete()
    page.goto(f"/leaderboard/{world.variant.name}/")
    page.locator("figure[data-chart].drawn").wait_for()
    low, high = map(
        float, page.locator("figure[data-chart]").get_attribute("data-x-range").split(",")
    )
    assert low < first.at.timestamp() < high
    assert high - low <= 15 * 60, (low, high)  # minutes: not the evening around it
    legend = page.locator("figure[data-chart] .u-legend").inner_text()
    assert "(latest)" in legend and NO_VALUE not in legend, legend
    shoot(page, "leaderboard-one-match")


@pytest.mark.parametrize("matches", [1, 500])
def test_a_bot_page_reads_well_from_its_first_match_to_its_five_hundredth(
    page, transactional_db, matches
) -> None:
    owner = User.objects.create_user(username="hist", password="a-long-test-passphrase-42")
    bots = build_history(owner=owner, matches=matches, prefix="hist", gap=timedelta(minutes=3))
    bot = bots[0]
    last = RatingHistory.objects.filter(bot=bot).order_by("-sequence").first()
    assert last is not None
    rated = RatingHistory.objects.filter(bot=bot).count()
    rating = f"{round(last.mu_after - 3 * last.sigma_after, 2):.2f}"
    hand_sizes = SeatTally.objects.filter(bot=bot).values("hand_size").distinct().count()
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"/bots/{bot.pk}/")
        figure = page.locator("figure[data-chart].drawn")
        figure.wait_for()
        low, high = map(float, figure.get_attribute("data-x-range").split(","))
        # The axis spans the matches played, from the rating before the first, and little more.
        assert low <= 0 and high >= rated, (low, high)
        assert high - low <= 1.1 * rated + 1, (low, high)
        legend = page.locator("figure[data-chart] .u-legend").inner_text()
        assert f"{rated} (latest)" in legend and rating in legend and NO_VALUE not in legend, legend
        box = page.locator("figure[data-chart] canvas").bounding_box()
        assert box is not None and box["width"] > 250 and box["height"] > 200
        assert page.locator("#by-hand-size tbody tr").count() == hand_sizes > 0
        assert page.locator("#by-place tbody tr").count() == 4
        assert page.locator("#opponents tbody tr").count() == 3
        assert page.locator("#faults-over-time tbody tr").count() >= 1
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"the bot page scrolls sideways at {width} px ({scroll} px)"
        shoot(page, f"bot-{matches}-matches-{width}")


def test_the_scrubber_jumps_to_any_deal_and_trick(page, world) -> None:
    match = world.finished[2]
    deals = Replay.objects.get(match=match).data["deals"]
    viewer = open_replay(page, match.pk)
    positions = sum(len(d["tricks"]) + 1 for d in deals)
    page.locator(".scrubber").fill(str(positions - 1))
    assert viewer.get_attribute("data-deal") == str(len(deals))
    assert viewer.get_attribute("data-trick") == str(len(deals[-1]["tricks"]))
    third = len(deals[0]["tricks"]) + 1 + 2  # deal 2, trick 2
    page.locator(".scrubber").fill(str(third))
    assert (viewer.get_attribute("data-deal"), viewer.get_attribute("data-trick")) == ("2", "2")
    page.keyboard.press("ArrowRight")  # keys and scrubber move the same position
    assert page.locator(".scrubber").input_value() == str(third + 1)


def test_fallback_moves_are_marked_and_each_move_shows_its_latency(page, world) -> None:
    match = world.finished[3]
    stored = Replay.objects.get(match=match)
    first = stored.data["deals"][0]
    leader = first["tricks"][0]["leader"]
    decisions = [
        {"deal": 1, "trick": None, "seat": s, "type": "bid", "latency_ms": 40.0 + s}
        | {"fallback": False, "fault": None}
        for s in range(4)
    ] + [
        {"deal": 1, "trick": 1, "seat": leader, "type": "play", "latency_ms": 1000.0}
        | {"fallback": True, "fault": "timeout"}
    ]
    stored.data = {**stored.data, "decisions": decisions}
    stored.save(update_fields=["data"])
    open_replay(page, match.pk)
    assert page.locator(".seat .bid-decision").first.inner_text() == "bid took 40 ms"
    page.keyboard.press("ArrowRight")
    marker = page.locator(".trick-info .fallback")
    assert marker.count() == 1
    assert "timeout" in marker.get_attribute("title")
    assert "1000 ms" in page.locator(".trick-info").inner_text()


def test_each_move_shows_the_time_bank_its_bot_had_left_after_it(page, world) -> None:
    match = world.finished[3]
    stored = Replay.objects.get(match=match)
    leader = stored.data["deals"][0]["tricks"][0]["leader"]
    decisions = [
        {"deal": 1, "trick": None, "seat": s, "type": "bid", "latency_ms": 40.0 + s}
        | {"fallback": False, "fault": None, "time_bank_ms": 10_000 - s}
        for s in range(4)
    ] + [
        {"deal": 1, "trick": 1, "seat": leader, "type": "play", "latency_ms": 3440.0}
        | {"fallback": False, "fault": None, "time_bank_ms": 7560}
    ]
    stored.data = {**stored.data, "decisions": decisions}
    stored.save(update_fields=["data"])
    open_replay(page, match.pk)
    bid = page.locator(".seat .bid-decision").first
    assert bid.inner_text().startswith("bid took 40 ms")
    assert bid.locator(".bank").get_attribute("data-bank-ms") == "10000"
    assert "10.0 s bank left" in bid.inner_text()
    page.keyboard.press("ArrowRight")
    info = page.locator(".trick-info")
    assert info.locator(".bank").get_attribute("data-bank-ms") == "7560"
    assert "7.6 s bank left" in info.inner_text()
    assert "7560 ms" in info.locator(".bank").get_attribute("title")


def test_a_replay_file_from_ohhell_is_loaded_into_the_viewer(page, world, tmp_path) -> None:
    game = play_game(preset("oh-hell"), 3, 77, [make_player("random", seed=s) for s in range(3)])
    path = tmp_path / "ohhell-replay.json"
    path.write_text(json.dumps(to_replay(game)))
    page.goto(f"/matches/{world.queued[0].pk}/")  # a match with no replay of its own
    page.set_input_files("#replay-file", str(path))
    page.wait_for_function("() => document.getElementById('replay').dataset.file")
    assert page.locator("#replay .seat").count() == 3
    assert page.locator("#replay").get_attribute("data-deal") == "1"
    assert "Showing ohhell-replay.json" in page.locator("#replay-file-note").inner_text()
    page.keyboard.press("End")
    assert page.locator("#replay").get_attribute("data-deal") == str(len(game.deals))
    bad = tmp_path / "not-a-replay.json"
    bad.write_text('{"hello": 1}')
    page.set_input_files("#replay-file", str(bad))
    page.wait_for_function("() => document.getElementById('replay-file').files.length")
    page.locator("#replay-file-note.alert").wait_for()
    shoot(page, "match-loaded-file")


def test_the_ranking_study_chart_is_drawn_with_the_shared_chart_set_up(page, world) -> None:
    page.goto("/variants/")
    page.locator("figure[data-study-chart].drawn").wait_for()
    assert page.locator("figure[data-study-chart] canvas").count() == 1
    assert page.evaluate("typeof window.OhHellCharts.plot") == "function"


def test_a_bot_with_a_wrong_secret_shows_why_on_my_bots_and_its_secret_rotates_after_a_confirmation(
    page, transactional_db, settings
) -> None:
    from tests.support.signing_bots import signing_bot
    from tournaments.services.bots import bot_verify

    settings.BOT_ALLOW_LOOPBACK = True
    User.objects.create_user(username="author", password="a-long-test-passphrase-42")
    sign_in(page, "author")
    with signing_bot("a-mistyped-secret") as wrong_url:
        page.get_by_label("Name").fill("typo-bot")
        page.get_by_label("Endpoint URL").fill(wrong_url)
        page.get_by_role("button", name="Register").click()
        page.wait_for_url("**/my/bots/*/")
        bot = Bot.objects.get(name="typo-bot")
        bot_verify(bot=bot)  # as the worker does once the registration commits

    page.goto("/my/bots/")
    row = page.locator("table.my-bots tbody tr", has_text="typo-bot")
    assert "your bot refused the platform's signature: check its secret" in row.inner_text()
    assert "failed: refused" in row.inner_text()
    shoot(page, "refused-signature-my-bots")

    # Rotating asks first; cancelling changes nothing, confirming shows the new secret once.
    page.get_by_role("link", name="typo-bot").click()
    page.get_by_role("button", name="Rotate the secret…").click()
    page.wait_for_url(lambda url: "/rotate-secret/" in url)
    assert "stops working" in page.locator("main").inner_text()
    page.get_by_role("link", name="Cancel").click()
    assert Bot.objects.get(pk=bot.pk).secret == bot.secret
    page.get_by_role("button", name="Rotate the secret…").click()
    page.get_by_role("button", name="Yes, rotate the secret").click()
    page.wait_for_url(f"**/my/bots/{bot.pk}/")
    secret = page.locator("#secret").input_value()
    assert secret == Bot.objects.get(pk=bot.pk).secret != bot.secret

    # The bot restarted with the new secret passes and is active again.
    with signing_bot(secret) as fixed_url:
        Bot.objects.filter(pk=bot.pk).update(endpoint_url=fixed_url)
        assert bot_verify(bot=Bot.objects.get(pk=bot.pk)).ok
    page.reload()
    assert page.locator("#bot-status").inner_text() == "active"
    assert page.locator("#disabled-reason").count() == 0
    assert page.locator("#last-check").inner_text().startswith("passed")


def test_an_author_asks_for_a_scrimmage_follows_it_and_watches_its_replay(
    page, transactional_db, example_bots, loopback_allowed, short_variant
) -> None:
    author = User.objects.create_user(
        username="author", email="author@example.org", password="a-long-test-passphrase-42"
    )
    confirm_email(author)  # scrimmages, like ladders, need a confirmed address
    practising, _sparring = (
        Bot.objects.create(
            owner=author,
            name=name,
            endpoint_url=f"{example_bots.urls[player]}/{name}",
            secret=f"secret-{name}",
            status="active",
        )
        for name, player in (("practising", "heuristic"), ("sparring", "random"))
    )
    sign_in(page, "author")
    page.goto(f"/my/bots/{practising.pk}/")
    page.get_by_role("link", name="Practice…").click()
    page.wait_for_url(f"**/my/bots/{practising.pk}/practice/")
    page.get_by_label("random").check()
    page.get_by_label("heuristic").check()
    page.get_by_label("sparring").check()
    page.get_by_label("Variant").select_option(short_variant.name)
    page.get_by_label("Matches").fill("2")
    page.get_by_label("Seed").fill("42")
    page.get_by_label("Time bank (ms)").fill("2000")
    shoot(page, "practice")
    page.get_by_role("button", name="Start the scrimmage").click()
    page.wait_for_url("**/my/scrimmages/*/")
    scrimmage = Scrimmage.objects.get(bot=practising)
    assert scrimmage.seed == 42 and scrimmage.variant == short_variant
    assert scrimmage.time_bank_ms == 2000
    assert set(scrimmage.matches.values_list("time_bank_ms", flat=True)) == {2000}
    names = {o.bot.name for o in scrimmage.opponent_entries.select_related("bot")}
    assert names == {"sparring", "reference:random", "reference:heuristic"}
    page.evaluate("window.loadedOnce = true")
    # Played as the scrimmage queue's worker plays them (with tasks run in-process, the
    # request that asked has played them already, and these find nothing left to claim).
    for match in scrimmage.matches.order_by("round"):
        match_run(match_id=match.pk)
    page.locator('#scrimmage[data-status="finished"]').wait_for(timeout=30_000)
    assert page.evaluate("window.loadedOnce") is True  # followed live, never reloaded
    assert page.locator("#scrimmage-progress").inner_text() == "2 of 2"
    assert page.locator(".scrimmage-matches .replay-link").count() == 2
    shoot(page, "scrimmage")
    first = scrimmage.matches.get(round=0)
    page.locator(f'tr[data-match="{first.pk}"] .replay-link').click()
    page.wait_for_url(f"**/matches/{first.pk}/**")
    viewer = page.locator('#replay[data-loaded="true"]')
    viewer.wait_for(timeout=15_000)
    assert page.locator("#replay .seat").count() == 4
    assert "scrimmage" in page.locator("#scrimmage-link").inner_text()
    replay = Replay.objects.get(match=first).data
    viewer.focus()
    page.keyboard.press("ArrowRight")
    winner = replay["deals"][0]["tricks"][0]["winner"]
    assert page.locator(".trick-winner").get_attribute("data-winner") == str(winner)
    shoot(page, "scrimmage-replay")
