"""Dashboard pages: status codes, empty and large states, and a constant number of queries."""

from __future__ import annotations

import json
import random
import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from engine.seeds import seed_sha256
from tests.support.world import World, make_bots, play_and_record, queue_match
from tournaments.leases import claim_token
from tournaments.models import (
    BotHealthCheck,
    Match,
    MatchStatus,
    Rating,
    Replay,
    SeatFault,
    Tournament,
    TournamentStatus,
    Variant,
    VoidedDeal,
)
from tournaments.services.matches import match_claim, match_fail_attempt
from tournaments.services.ratings import ratings_apply_pending

pytestmark = pytest.mark.django_db


def page_urls(world: World) -> list[str]:
    """Every dashboard page about the world's objects."""
    return [
        "/",
        f"/leaderboard/{world.variant.name}/",
        f"/leaderboard/{world.variant.name}/?page=2",
        f"/bots/{world.bots[0].pk}/",
        "/tournaments/",
        f"/tournaments/{world.tournament.pk}/",
        f"/tournaments/{world.tournament.pk}/progress.json",
        f"/matches/{world.finished[0].pk}/",
        f"/matches/{world.queued[0].pk}/",
        "/variants/",
        "/bots/",
        "/matches/",
        f"/matches/?bot={world.bots[0].pk}&fault=timeout",
        f"/variants/{world.variant.name}/",
    ]


def queries_per_page(client, urls: list[str]) -> dict[str, int]:
    """Fetch each page, asserting it renders, and count its queries."""
    counts = {}
    for url in urls:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200, url
        counts[url] = len(queries)
    return counts


def grow(world: World, owner: User) -> None:
    """Add bots, matches, faults, health checks, ratings and tournaments around the same rows."""
    more = make_bots(120, [owner], prefix="extra")
    for i in range(8):
        seated = [world.bots[0], world.bots[1], more[i], more[i + 20]]
        match = queue_match(world.tournament, seated, round_=20 + i)
        play_and_record(match, faults=True)
        world.finished.append(match)
        queue_match(world.tournament, [more[i + 40], more[i + 41], more[i + 42]], round_=40 + i)
    ratings_apply_pending()
    BotHealthCheck.objects.bulk_create(
        BotHealthCheck(bot=world.bots[0], ok=True, latency_ms=30 + i) for i in range(30)
    )
    for i in range(5):
        Tournament.objects.create(
            name=f"Cup {i}", organiser=owner, variant=world.variant, format="swiss"
        )


def test_every_page_queries_the_database_a_constant_number_of_times(client, world) -> None:
    urls = page_urls(world)
    # Once first, so what a page remembers between views (a replay's check) is remembered.
    queries_per_page(client, urls)
    small = queries_per_page(client, urls)
    grow(world, User.objects.get(username="ada"))
    large = queries_per_page(client, urls)
    assert large == small
    assert max(small.values()) <= 12


def test_the_pages_answer_on_an_empty_platform(client) -> None:
    Tournament.objects.create(
        name="Not started",
        organiser=User.objects.create_user(username="org"),
        variant=Variant.objects.get(name="oh-hell"),
        format="round_robin",
    )
    tournament = Tournament.objects.get()
    for url in [
        "/",
        "/leaderboard/oh-hell/",
        "/tournaments/",
        f"/tournaments/{tournament.pk}/",
        "/variants/",
        "/variants/oh-hell/",
        "/bots/",
        "/matches/",
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
    assert b"No fixtures yet" in client.get(f"/tournaments/{tournament.pk}/").content
    assert b"No bot has a rating" in client.get("/leaderboard/oh-hell/").content
    progress = client.get(f"/tournaments/{tournament.pk}/progress.json").json()
    assert progress["total"] == 0 and progress["percent"] == 0.0 and progress["status"] == "draft"


def test_the_leaderboard_index_goes_to_the_variant_with_most_rated_bots(client, world) -> None:
    response = client.get("/leaderboard/")
    assert response.status_code == 302 and response["Location"] == "/leaderboard/oh-hell/"


def test_without_any_variant_the_leaderboard_index_is_not_found(client) -> None:
    Variant.objects.all().delete()
    assert client.get("/leaderboard/").status_code == 404
    assert client.get("/").status_code == 200
    assert client.get("/variants/").status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "/bots/999999/",
        "/tournaments/999999/",
        "/tournaments/999999/progress.json",
        "/matches/999999/",
        "/leaderboard/no-such-variant/",
        "/no/such/page/",
    ],
)
def test_an_unknown_id_gives_the_not_found_page(client, url) -> None:
    response = client.get(url)
    assert response.status_code == 404
    assert b"Not found" in response.content


def test_a_match_not_yet_played_embeds_no_replay_but_can_load_a_file(client, world) -> None:
    response = client.get(f"/matches/{world.queued[0].pk}/")
    assert b"The replay is shown once the match has finished" in response.content
    assert b"data-replay-url" not in response.content
    assert b'id="replay-file"' in response.content


def test_a_finished_match_without_a_stored_replay_says_so(client, world) -> None:
    match = world.finished[0]
    Replay.objects.filter(match=match).delete()
    response = client.get(f"/matches/{match.pk}/")
    assert response.status_code == 200
    assert b"This match has no stored replay" in response.content


def test_a_finished_match_links_its_replay_for_the_viewer_and_names_its_seats(
    client, world
) -> None:
    match = world.finished[0]
    response = client.get(f"/matches/{match.pk}/")
    body = response.content.decode()
    assert f'data-replay-url="/api/matches/{match.pk}/replay/"' in body
    fetched = json.loads(client.get(f"/api/matches/{match.pk}/replay/").content)
    assert {
        **Replay.objects.get(match=match).data,
        "seed_sha256": fetched["seed_sha256"],
    } == fetched
    assert f'href="/api/matches/{match.pk}/replay/"' in body
    for seat in match.seats.select_related("bot"):
        assert seat.bot.name in body


def test_the_progress_json_counts_matches_by_state(client, world) -> None:
    Match.objects.filter(pk=world.queued[0].pk).update(status=MatchStatus.RUNNING)
    progress = client.get(f"/tournaments/{world.tournament.pk}/progress.json").json()
    assert progress["finished"] == len(world.finished)
    assert progress["running"] == 1 and progress["queued"] == len(world.queued) - 1
    assert progress["total"] == len(world.finished) + len(world.queued)
    assert progress["estimated_finish"] is not None and progress["settled"] is False


def test_a_finished_tournament_is_settled_and_names_its_winner(client, world) -> None:
    Match.objects.filter(pk__in=[m.pk for m in world.queued]).update(status=MatchStatus.CANCELLED)
    Tournament.objects.filter(pk=world.tournament.pk).update(status=TournamentStatus.FINISHED)
    progress = client.get(f"/tournaments/{world.tournament.pk}/progress.json").json()
    assert progress["settled"] is True and progress["percent"] == 100.0
    assert b"Winner:" in client.get(f"/tournaments/{world.tournament.pk}/").content


def test_every_page_links_to_its_api_equivalent(client, world) -> None:
    expected = {
        "/": 'href="/api/"',
        f"/leaderboard/{world.variant.name}/": 'href="/api/leaderboard/?variant=oh-hell"',
        f"/bots/{world.bots[0].pk}/": f'href="/api/bots/{world.bots[0].pk}/rating-history/"',
        "/tournaments/": 'href="/api/tournaments/"',
        f"/tournaments/{world.tournament.pk}/": f'href="/api/tournaments/{world.tournament.pk}/"',
        f"/matches/{world.finished[0].pk}/": f'href="/api/matches/{world.finished[0].pk}/"',
        "/variants/": 'href="/api/variants/"',
    }
    for url, link in expected.items():
        assert link in client.get(url).content.decode(), url


def test_a_leaderboard_of_thousands_of_bots_is_paged_in_rating_order(client, owner) -> None:
    variant = Variant.objects.get(name="oh-hell")
    small_bots = make_bots(3, [owner], prefix="few")
    Rating.objects.bulk_create(Rating(bot=b, variant=variant, matches=20) for b in small_bots)
    with CaptureQueriesContext(connection) as few:
        assert client.get("/leaderboard/oh-hell/").status_code == 200
    bots = make_bots(3000, [owner], prefix="many")
    rng = random.Random(5)
    Rating.objects.bulk_create(
        Rating(bot=b, variant=variant, mu=rng.uniform(10, 40), sigma=rng.uniform(1, 8), matches=12)
        for b in bots
    )
    with CaptureQueriesContext(connection) as many:
        response = client.get("/leaderboard/oh-hell/?page=7")
    assert response.status_code == 200
    assert len(many) == len(few)
    lines = response.context["lines"]
    assert len(lines) == 50 and lines[0].place == 301
    values = [line.rating.conservative for line in lines]
    assert values == sorted(values, reverse=True)
    assert b"page 7 of 61" in response.content
    assert client.get("/leaderboard/oh-hell/?page=9999").context["page"].number == 61
    assert client.get("/leaderboard/oh-hell/?page=x").context["page"].number == 1
    assert client.get("/").status_code == 200


def test_the_bot_page_shows_faults_health_and_the_disabled_reason(client, world) -> None:
    bot = world.bots[0]
    bot.status, bot.disabled_cause, bot.disabled_reason = "disabled", "health", "3 failed checks"
    bot.save()
    client.force_login(bot.owner)  # the reason and error texts are the owner's (and staff's)
    body = client.get(f"/bots/{bot.pk}/").content.decode()
    assert "3 failed checks" in body and "failed health checks" in body
    assert "no answer in 2000 ms" in body and "40 ms" in body
    client.logout()
    faulty = world.finished[0].seats.order_by("-seat").first().bot
    assert "timeout" in client.get(f"/bots/{faulty.pk}/").content.decode()


def test_the_variants_page_states_every_preset_in_the_engines_words(client) -> None:
    body = client.get("/variants/").content.decode()
    for variant in Variant.objects.filter(is_preset=True):
        assert f'id="{variant.name}"' in body
        for line in variant.to_engine().describe():
            assert line.replace("'", "&#x27;") in body


def test_the_api_root_lists_the_dashboard(client) -> None:
    root = client.get("/api/", HTTP_ACCEPT="application/json").json()
    assert root["dashboard"].endswith("/") and root["dashboard"].rsplit("/", 2)[-2] != "api"


def test_the_admin_links_to_the_dashboard(client, staff) -> None:
    client.force_login(staff)
    body = client.get("/admin/").content.decode()
    assert '<a href="/">View site</a>' in body


def test_the_breadcrumb_targets_exist_and_list_what_they_name(client, world) -> None:
    bots = client.get("/bots/").content.decode()
    assert all(bot.name in bots for bot in world.bots)
    matches = client.get("/matches/").content.decode()
    assert all(f"#{m.pk}<" in matches for m in world.finished + world.queued)
    variant = client.get("/variants/oh-hell/").content.decode()
    assert "Best bots" in variant and f"#{world.finished[-1].pk}<" in variant
    assert client.get("/variants/no-such-variant/").status_code == 404
    for page in (f"/bots/{world.bots[0].pk}/", f"/matches/{world.finished[0].pk}/"):
        body = client.get(page).content.decode()
        assert 'href="/bots/"' in body or 'href="/matches/"' in body


def test_fault_counts_link_to_the_matches_where_the_faults_happened(client, world) -> None:
    fault = SeatFault.objects.select_related("seat").earliest("pk")
    bot_id = fault.seat.bot_id
    page = client.get(f"/bots/{bot_id}/").content.decode()
    link = f"/matches/?bot={bot_id}&amp;fault={fault.kind}"
    assert link in page
    listed = client.get(f"/matches/?bot={bot_id}&fault={fault.kind}").content.decode()
    with_fault = set(
        SeatFault.objects.filter(seat__bot_id=bot_id, kind=fault.kind).values_list(
            "seat__match_id", flat=True
        )
    )
    shown = {m.pk for m in world.finished + world.queued if f"#{m.pk}<" in listed}
    assert shown == with_fault and with_fault


@pytest.mark.parametrize(
    ("query", "field"), [("bot=abc", "bot:"), ("bot=999999", "bot:"), ("fault=melted", "fault:")]
)
def test_a_bad_match_filter_is_refused_naming_the_field(client, world, query, field) -> None:
    response = client.get(f"/matches/?{query}")
    assert response.status_code == 400
    assert field in response.content.decode()


def test_seats_and_rounds_are_numbered_from_one_and_samples_shown_as_sent(client, world) -> None:
    match = world.finished[0]
    seat = match.seats.order_by("seat").last()
    SeatFault.objects.create(seat=seat, kind="not_json", count=1, sample='<b>"bid": 2</b>')
    client.force_login(seat.bot.owner)  # samples are shown to the bot's owner and staff
    page = client.get(f"/matches/{match.pk}/").content.decode()
    numbers = re.findall(r'<tr[^>]*>\s*<td class="num">(\d+)</td>', page)
    assert numbers == ["1", "2", "3", "4"]
    assert f"round {match.round + 1} of" in page
    assert "&lt;b&gt;&quot;bid&quot;: 2&lt;/b&gt;" in page and '<b>"bid"' not in page


def test_a_matchs_platform_error_is_shown_to_staff_only(client, world, other_user, staff) -> None:
    match = world.queued[0]
    error = "OperationalError: could not connect to server at 10.0.0.7 port 5432"
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.FAILED, error=error)
    owner = match.seats.select_related("bot__owner").first().bot.owner
    for viewer, sees in ((None, False), (owner, False), (other_user, False), (staff, True)):
        client.logout()
        if viewer is not None:
            client.force_login(viewer)
        page = client.get(f"/matches/{match.pk}/").content.decode()
        assert '<span class="status status-failed">failed</span>' in page  # for everyone
        assert ("10.0.0.7" in page) is sees, viewer
        assert ("Last error" in page) is sees, viewer


def _fair_deal_box(client, match: Match) -> tuple[str, str]:
    page = client.get(f"/matches/{match.pk}/").content.decode()
    box = page[page.index('id="fair-deal"') :]
    return page, box[: box.index("</section>")]


def test_the_fair_deal_box_shows_a_voided_deal_and_its_seed_once_the_match_ended(
    client, world
) -> None:
    match = world.queued[0]
    published = seed_sha256(match.seed)
    token = claim_token()
    assert match_claim(match_id=match.pk, token=token)
    error = "OperationalError: could not connect to server at 10.0.0.7 port 5432"
    assert match_fail_attempt(match_id=match.pk, token=token, error=error) == "queued"
    voided = VoidedDeal.objects.get(match=match)
    page, box = _fair_deal_box(client, match)
    assert published in box and "platform error" in box
    assert f"<code>{voided.seed}</code>" not in box and "hidden until the match ends" in box
    assert "10.0.0.7" not in page
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.CANCELLED)
    page, box = _fair_deal_box(client, match)
    assert published in box and f"<code>{voided.seed}</code>" in box
    assert "hidden until the match ends" not in box


def test_the_tournament_page_counts_and_marks_tables_of_one_owners_bots(client, world) -> None:
    from tournaments.selectors.tournaments import shared_owner_matches, tournament_standings

    standings = tournament_standings(tournament=world.tournament)
    shared = shared_owner_matches(tournament=world.tournament)
    assert standings["shared_owner_tables"] > 0  # eight bots of two owners, tables of four
    page = client.get(f"/tournaments/{world.tournament.pk}/").content.decode()
    assert "Same owner" in page
    assert f"{standings['shared_owner_tables']} finished tables seated two or more bots" in page
    assert page.count('class="shared-owner"') == min(len(shared), 40)  # one page of fixtures
