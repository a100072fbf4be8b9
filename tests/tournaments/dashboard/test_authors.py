"""The bot authors' pages: accounts, "My bots" and "Write a bot", through Django's test client."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.support.pages import GOOD_PASSWORD, Page, signed_in
from tests.support.users import PASSWORD
from tournaments.api.throttling import WriteRateThrottle
from tournaments.dashboard import protocol_doc
from tournaments.models import Bot, BotHealthCheck, Match, MatchSeat, MatchStatus, SeatFault
from tournaments.services.bots import bot_complete_check

pytestmark = pytest.mark.django_db

# Accounts ---------------------------------------------------------------------------------------


def test_signing_up_creates_the_account_signs_in_and_leads_to_my_bots(client) -> None:
    page = client.get("/signup/")
    assert page.status_code == 200
    html = page.content.decode()
    for field in ("username", "email", "password"):
        assert f'<label for="id_{field}">' in html
    response = client.post(
        "/signup/", {"username": "newcomer", "password": GOOD_PASSWORD, "email": "n@example.org"}
    )
    assert response.status_code == 302 and response["Location"] == "/my/bots/"
    user = User.objects.get(username="newcomer")
    assert user.check_password(GOOD_PASSWORD) and Token.objects.filter(user=user).exists()
    assert client.get("/my/bots/").context["user"] == user


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"username": "a b"}, "username", "letters, digits"),
        ({"username": ""}, "username", "required"),
        ({"username": "u" * 151}, "username", "at most 150"),
        ({"username": "OWNER"}, "username", "taken"),
        ({"username": "\uff2fwner"}, "username", "taken"),  # fullwidth O
        ({"username": "n\u0435wcomer"}, "username", "script"),  # Cyrillic e
        ({"password": "123"}, "password", "too short"),
        ({"password": "password"}, "password", "too common"),
        ({"password": ""}, "password", "required"),
        ({"email": "not-an-email"}, "email", "valid email"),
    ],
)
def test_a_bad_sign_up_names_the_field_and_makes_no_account(
    client, owner, fields, field, words
) -> None:
    data = {"username": "newcomer", "password": GOOD_PASSWORD, "email": "", **fields}
    response = client.post("/signup/", data)
    assert response.status_code == 400
    errors = Page(response.content.decode()).errors
    assert list(errors) == [field], errors
    assert words in errors[field].lower()
    assert 'aria-invalid="true"' in response.content.decode()
    assert User.objects.count() == 1


def test_sign_up_answers_a_clear_error_to_odd_input_and_never_a_500(client, owner) -> None:
    bodies = [
        {"username": ["a", "b"], "password": [GOOD_PASSWORD, "x"]},
        {"username": "x\x00y", "password": GOOD_PASSWORD},
        {"username": "ünïcödé", "password": "\u2028" * 10},
        {},
    ]
    for body in bodies:
        response = client.post("/signup/", body)
        assert response.status_code in (302, 400), body
    response = client.post("/signup/", "not a form", content_type="application/json")
    assert response.status_code == 400


def test_sign_up_through_the_page_counts_against_the_apis_throttle(client, monkeypatch) -> None:
    monkeypatch.setattr(
        WriteRateThrottle, "THROTTLE_RATES", {"auth": "2/minute", "writes": "9/minute"}
    )
    api = client.post(
        "/api/auth/signup/",
        {"username": "u0", "password": GOOD_PASSWORD},
        content_type="application/json",
    )
    assert api.status_code == 201
    first = Client().post("/signup/", {"username": "u1", "password": GOOD_PASSWORD})
    assert first.status_code == 302
    third = Client().post("/signup/", {"username": "u2", "password": GOOD_PASSWORD})
    assert third.status_code == 429
    assert f"try again in {int(third['Retry-After'])} s" in third.content.decode()
    assert not User.objects.filter(username="u2").exists()


def test_a_made_up_x_forwarded_for_is_no_way_around_the_sign_in_throttle(
    owner, monkeypatch
) -> None:
    monkeypatch.setattr(WriteRateThrottle, "THROTTLE_RATES", {"auth": "3/minute"})
    codes = [
        Client(HTTP_X_FORWARDED_FOR=f"10.0.0.{i}")
        .post("/signin/", {"username": "owner", "password": f"guess-{i}"})
        .status_code
        for i in range(5)
    ]
    assert codes == [400, 400, 400, 429, 429]


def test_a_throttled_sign_in_page_reads_the_same_for_a_right_and_a_wrong_password(
    owner, monkeypatch
) -> None:
    monkeypatch.setattr(WriteRateThrottle, "THROTTLE_RATES", {"auth": "1/minute"})
    assert Client().post("/signin/", {"username": "owner", "password": "x"}).status_code == 400
    pages = {
        password: Client().post("/signin/", {"username": "owner", "password": password})
        for password in ("wrong", PASSWORD)
    }
    for page in pages.values():
        assert page.status_code == 429
        assert int(page["Retry-After"]) >= 1
    wrong, right = (Page(p.content.decode()) for p in pages.values())
    assert "correct username and password" not in pages["wrong"].content.decode()
    assert wrong.errors == right.errors


def test_sign_in_is_locked_per_account_across_addresses_and_the_page_says_for_how_long(
    owner, settings
) -> None:
    settings.AUTH_LOCKOUT_FAILURES = 4
    settings.AUTH_LOCKOUT_SECONDS = 600
    for i in range(4):
        client = Client(REMOTE_ADDR=f"198.51.100.{i}")
        wrong = client.post("/signin/", {"username": "owner", "password": "wrong"})
        assert wrong.status_code == 400
    client = Client(REMOTE_ADDR="203.0.113.1")
    right = client.post("/signin/", {"username": "owner", "password": PASSWORD})
    assert right.status_code == 429
    seconds = int(right["Retry-After"])
    assert 590 <= seconds <= 600
    html = right.content.decode()
    assert f"Too many sign-in attempts for this account; try again in {seconds} s." in html
    assert "correct username and password" not in html
    assert "_auth_user_id" not in client.session
    # The API's token endpoint counts the same attempts.
    api = client.post(
        "/api/auth/token/",
        {"username": "owner", "password": PASSWORD},
        content_type="application/json",
    )
    assert api.status_code == 429 and api.json()["error"]["code"] == "locked_out"


def test_forms_refuse_a_post_without_the_csrf_token(owner) -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.post("/signup/", {"username": "x", "password": GOOD_PASSWORD}).status_code == 403
    assert client.post("/signin/", {"username": "owner", "password": PASSWORD}).status_code == 403
    page = client.get("/signin/")
    token = page.cookies["csrftoken"].value
    response = client.post(
        "/signin/", {"username": "owner", "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302


def test_sign_in_goes_back_to_a_local_next_only(client, owner) -> None:
    response = client.post(
        "/signin/", {"username": "owner", "password": PASSWORD, "next": "/write-a-bot/"}
    )
    assert response["Location"] == "/write-a-bot/"
    client.post("/signout/")
    response = client.post(
        "/signin/", {"username": "owner", "password": PASSWORD, "next": "https://evil.example/"}
    )
    assert response["Location"] == "/my/bots/"


def test_a_wrong_password_is_refused_with_a_message(client, owner) -> None:
    response = client.post("/signin/", {"username": "owner", "password": "wrong"})
    assert response.status_code == 400
    assert "correct username and password" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_sign_out_takes_a_post_and_ends_the_session(owner) -> None:
    client = signed_in(owner)
    assert client.get("/signout/").status_code == 405
    assert client.post("/signout/").status_code == 302
    assert "_auth_user_id" not in client.session
    assert client.get("/my/bots/")["Location"].startswith("/signin/?next=/my/bots/")


def test_the_header_offers_sign_in_or_my_bots_and_sign_out(client, owner) -> None:
    html = client.get("/").content.decode()
    assert 'href="/signin/"' in html and 'href="/write-a-bot/"' in html
    html = signed_in(owner).get("/").content.decode()
    assert 'href="/my/bots/"' in html and 'action="/signout/"' in html


# My bots ---------------------------------------------------------------------------------------


def register(client: Client, **fields: str):
    data = {"name": "my-first", "endpoint_url": "", "description": "", **fields}
    return client.post("/my/bots/", data)


def test_registering_shows_the_secret_once(owner, scripted_bot_server, loopback_allowed) -> None:
    client = signed_in(owner)
    response = register(client, endpoint_url=f"{scripted_bot_server}/ok")
    bot = Bot.objects.get(name="my-first")
    assert bot.owner == owner
    assert response.status_code == 302 and response["Location"] == f"/my/bots/{bot.pk}/"
    page = client.get(f"/my/bots/{bot.pk}/")
    html = page.content.decode()
    assert f'value="{bot.secret}"' in html
    assert f"OHHELL_SECRET={bot.secret} python starter_bot.py --port" in html
    assert "no-store" in page["Cache-Control"]
    again = client.get(f"/my/bots/{bot.pk}/").content.decode()
    assert bot.secret not in again
    assert "my-first" in client.get("/my/bots/").content.decode()


def test_a_loopback_endpoint_is_refused_naming_the_setting(owner, settings) -> None:
    settings.BOT_ALLOW_LOOPBACK = False
    response = register(signed_in(owner), endpoint_url="http://127.0.0.1:8001/")
    assert response.status_code == 400
    errors = Page(response.content.decode()).errors
    assert list(errors) == ["endpoint_url"]
    assert "BOT_ALLOW_LOOPBACK" in errors["endpoint_url"]
    assert not Bot.objects.exists()


def test_other_refusals_do_not_blame_loopback(owner, settings) -> None:
    settings.BOT_ALLOW_LOOPBACK = False
    response = register(signed_in(owner), endpoint_url="http://10.1.2.3:8001/")
    assert "BOT_ALLOW_LOOPBACK" not in Page(response.content.decode()).errors["endpoint_url"]


@pytest.mark.parametrize(
    ("fields", "field", "status"),
    [
        ({"name": "no spaces please"}, "name", 400),
        ({"name": ""}, "name", 400),
        ({"name": "x" * 65}, "name", 400),
        ({"name": "TAKEN"}, "name", 400),
        ({"endpoint_url": "ftp://example.org/"}, "endpoint_url", 400),
        ({"endpoint_url": "http://user:pw@example.org/"}, "endpoint_url", 400),
        ({"endpoint_url": ""}, "endpoint_url", 400),
        ({"description": "d" * 501}, "description", 400),
    ],
)
def test_a_bad_registration_names_the_field(owner, make_bot, fields, field, status) -> None:
    make_bot(owner, name="taken")
    data = {"name": "fresh", "endpoint_url": "https://93.184.215.14/bot", **fields}
    response = register(signed_in(owner), **data)
    assert response.status_code == status
    assert list(Page(response.content.decode()).errors) == [field]
    assert Bot.objects.count() == 1


def test_my_bots_needs_a_sign_in(client, bot) -> None:
    for url in ("/my/bots/", f"/my/bots/{bot.pk}/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/signin/?next=")
    response = client.post(f"/my/bots/{bot.pk}/rotate-secret/")
    assert response.status_code == 302
    assert Bot.objects.get(pk=bot.pk).secret == bot.secret


def test_another_users_bot_is_not_found_and_cannot_be_touched(bot, other_user) -> None:
    client = signed_in(other_user)
    assert client.get(f"/my/bots/{bot.pk}/").status_code == 404
    assert client.post(f"/my/bots/{bot.pk}/rotate-secret/").status_code == 404
    assert Bot.objects.get(pk=bot.pk).secret == bot.secret
    assert bot.name not in client.get("/my/bots/").content.decode()


def test_rotating_the_secret_asks_to_confirm_then_shows_the_new_one_once(bot, owner) -> None:
    client = signed_in(owner)
    question = client.get(f"/my/bots/{bot.pk}/rotate-secret/")
    assert question.status_code == 200
    assert "stops working" in question.content.decode()
    unconfirmed = client.post(f"/my/bots/{bot.pk}/rotate-secret/")
    assert unconfirmed.status_code == 400 and "Yes, rotate" in unconfirmed.content.decode()
    assert Bot.objects.get(pk=bot.pk).secret == bot.secret
    response = client.post(f"/my/bots/{bot.pk}/rotate-secret/", {"confirm": "rotate"})
    assert response["Location"] == f"/my/bots/{bot.pk}/"
    new = Bot.objects.get(pk=bot.pk).secret
    assert new != bot.secret
    assert f'value="{new}"' in client.get(f"/my/bots/{bot.pk}/").content.decode()
    assert new not in client.get(f"/my/bots/{bot.pk}/").content.decode()


def test_recent_faults_name_the_match_they_happened_in(
    owner, other_user, make_bot, oh_hell
) -> None:
    mine = make_bot(owner, name="faulty")
    others = [make_bot(other_user) for _ in range(3)]
    match = Match.objects.create(variant=oh_hell, status=MatchStatus.QUEUED)
    seats = [
        MatchSeat.objects.create(match=match, seat=i, bot=b)
        for i, b in enumerate([others[0], mine, *others[1:]])
    ]
    SeatFault.objects.create(
        seat=seats[1], kind="illegal_action", count=2, sample='{"card": "<b>ZZ</b>"}', latency_ms=9
    )
    SeatFault.objects.create(seat=seats[0], kind="timeout", count=1, sample="someone else's")
    html = signed_in(owner).get(f"/my/bots/{mine.pk}/").content.decode()
    assert f'href="/matches/{match.pk}/"' in html
    assert "illegal action" in html and "seat 2" in html
    assert "&lt;b&gt;ZZ&lt;/b&gt;" in html and "<b>ZZ</b>" not in html
    assert "someone else" not in html


def test_my_bots_lists_only_my_bots(owner, other_user, make_bot) -> None:
    make_bot(owner, name="alpha")
    make_bot(other_user, name="beta")
    html = signed_in(owner).get("/my/bots/").content.decode()
    assert "alpha" in html and "beta" not in html


# Write a bot ------------------------------------------------------------------------------------


def test_write_a_bot_is_linked_from_home_and_shows_steps_checker_starter_and_protocol(
    client,
) -> None:
    assert 'href="/write-a-bot/"' in client.get("/").content.decode()
    response = client.get("/write-a-bot/")
    assert response.status_code == 200
    html = response.content.decode()
    steps = [
        "Start your bot.",
        "Register it",
        "Copy its secret.",
        "Restart your bot with the secret,",
        "Verify it",
    ]
    places = [html.index(step) for step in steps]
    assert places == sorted(places)
    assert "ohhell-arena check http://127.0.0.1:8001/" in html
    assert "def choose_bid(" in html  # the starter bot's source
    assert "BOT_ALLOW_LOOPBACK" in html
    page = Page(html)
    # The protocol document, rendered: its sections have their anchors on this page.
    for anchor in ("transport", "signing", "messages", "time-limits", "network-policy"):
        assert anchor in page.ids
    assert "X-OhHell-Signature" in html


def test_every_link_of_the_write_a_bot_page_leads_somewhere(client) -> None:
    page = Page(client.get("/write-a-bot/").content.decode())
    assert page.links
    for href in page.links:
        if href.startswith("#"):
            assert href[1:] in page.ids, href
        elif href.startswith("/"):
            assert client.get(href, follow=True).status_code == 200, href
        else:
            assert href.startswith(("http://", "https://")), href
    assert "../" not in "".join(page.links)


def test_the_starter_bot_and_schemas_download_as_they_are_in_the_repository(client) -> None:
    response = client.get("/write-a-bot/starter_bot.py")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    assert b"".join(response.streaming_content) == protocol_doc.STARTER_BOT.read_bytes()
    names = protocol_doc.schema_names()
    assert "bid.request.json" in names and len(names) == 8
    response = client.get("/write-a-bot/schemas/bid.request.json")
    assert (
        b"".join(response.streaming_content)
        == (protocol_doc.SCHEMAS / "bid.request.json").read_bytes()
    )
    for bad in ("nope.json", "..%2F..%2Fconfig%2Fsettings.py", "bid.request.json.bak"):
        assert client.get(f"/write-a-bot/schemas/{bad}").status_code == 404


def test_the_loopback_line_says_what_this_server_does(client, settings) -> None:
    settings.BOT_ALLOW_LOOPBACK = True
    assert "accepts endpoints on loopback" in client.get("/write-a-bot/").content.decode()
    settings.BOT_ALLOW_LOOPBACK = False
    assert "refuses endpoints on loopback" in client.get("/write-a-bot/").content.decode()


def test_the_owner_opts_a_bot_into_the_ladder_and_out_again(bot, owner, other_user) -> None:
    client = signed_in(owner)
    assert not bot.ladder_opt_in
    assert "Opt into the ladder" in client.get(f"/my/bots/{bot.pk}/").content.decode()
    response = client.post(f"/my/bots/{bot.pk}/ladder/", {"enabled": "on"})
    assert response.status_code == 302
    assert Bot.objects.get(pk=bot.pk).ladder_opt_in
    assert "Leave the ladder" in client.get(f"/my/bots/{bot.pk}/").content.decode()
    assert signed_in(other_user).post(f"/my/bots/{bot.pk}/ladder/", {}).status_code == 404
    assert Bot.objects.get(pk=bot.pk).ladder_opt_in
    client.post(f"/my/bots/{bot.pk}/ladder/", {})
    assert not Bot.objects.get(pk=bot.pk).ladder_opt_in
    assert client.get(f"/my/bots/{bot.pk}/ladder/").status_code == 405


def test_opting_in_beyond_the_accounts_cap_says_why_on_the_page(
    bot, make_bot, owner, settings
) -> None:
    settings.LADDER_MAX_BOTS_PER_OWNER = 1
    make_bot(owner, ladder_opt_in=True)
    client = signed_in(owner)
    response = client.post(f"/my/bots/{bot.pk}/ladder/", {"enabled": "on"}, follow=True)
    assert response.status_code == 200
    assert "an account may have at most 1 bots on the ladders" in response.content.decode()
    assert not Bot.objects.get(pk=bot.pk).ladder_opt_in


def test_verify_queues_a_check_and_the_page_shows_it_pending_then_its_result(
    bot, owner, scripted_bot_server, loopback_allowed
) -> None:
    Bot.objects.filter(pk=bot.pk).update(endpoint_url=f"{scripted_bot_server}/ok")
    client = signed_in(owner)
    response = client.post(f"/my/bots/{bot.pk}/verify/")
    check = BotHealthCheck.objects.get(bot=bot)
    assert check.ok is None  # queued: the request did not wait for the bot
    assert response["Location"] == f"/my/bots/{bot.pk}/?check={check.pk}#verify"
    html = client.get(response["Location"]).content.decode()
    assert "Checking" in html
    assert f'data-poll="/api/bots/{bot.pk}/health-checks/{check.pk}/"' in html
    polled = client.get(f"/api/bots/{bot.pk}/health-checks/{check.pk}/").json()
    assert polled["status"] == "pending"
    bot_complete_check(check_id=check.pk)  # what the worker does
    assert client.get(f"/api/bots/{bot.pk}/health-checks/{check.pk}/").json()["status"] == "ok"
    html = client.get(f"/my/bots/{bot.pk}/?check={check.pk}").content.decode()
    assert "Passed in" in html and 'data-poll="' not in html
    assert Bot.objects.get(pk=bot.pk).status == "active"


def test_a_failed_verification_says_why(bot, owner, scripted_bot_server, loopback_allowed) -> None:
    Bot.objects.filter(pk=bot.pk).update(endpoint_url=f"{scripted_bot_server}/error")
    client = signed_in(owner)
    location = client.post(f"/my/bots/{bot.pk}/verify/")["Location"]
    bot_complete_check(check_id=BotHealthCheck.objects.get(bot=bot).pk)
    html = client.get(location).content.decode()
    assert "Failed: http status" in html


def test_only_the_owner_verifies_and_sees_checks(bot, owner, other_user, make_bot) -> None:
    assert signed_in(other_user).post(f"/my/bots/{bot.pk}/verify/").status_code == 404
    assert not BotHealthCheck.objects.exists()
    theirs = make_bot(other_user)
    check = BotHealthCheck.objects.create(bot=theirs, ok=False, error_kind="timeout")
    client = signed_in(owner)
    for query in (f"?check={check.pk}", "?check=abc", "?check=99999999999999999999"):
        response = client.get(f"/my/bots/{bot.pk}/{query}")
        assert response.status_code == 200
        assert 'id="check-result"' not in response.content.decode()


@pytest.mark.parametrize("url", ["/", "/signup/", "/signin/", "/write-a-bot/"])
def test_pages_start_with_a_skip_link_to_the_content(client, url) -> None:
    page = Page(client.get(url).content.decode())
    assert page.links[0] == "#content" and "content" in page.ids


def test_the_ladder_section_says_when_this_server_cannot_play_ladders(bot, owner, settings) -> None:
    client = signed_in(owner)
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert "its ladders do not play" in client.get(f"/my/bots/{bot.pk}/").content.decode()
    settings.CELERY_TASK_ALWAYS_EAGER = False
    assert "its ladders do not play" not in client.get(f"/my/bots/{bot.pk}/").content.decode()
