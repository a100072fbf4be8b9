"""Scrimmages through the API: asked for with 202, refused naming the field, kept to the day's
quota, shown to their owner and staff only, and never rated."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from arena.timebank import DEFAULT_TIME_BANK_MS, MAX_TIME_BANK_MS
from tests.support.users import client_for
from tests.support.world import play_and_record
from tournaments.models import (
    Bot,
    Ladder,
    Match,
    MatchStatus,
    RankFit,
    Rating,
    RatingHistory,
    ReferencePlayer,
    Scrimmage,
)
from tournaments.seeds import deal_seed, scrimmage_deal_seed
from tournaments.services.rank_intervals import rank_intervals_fit_all
from tournaments.services.ratings import ratings_apply_pending
from tournaments.services.scrimmages import next_utc_day

URL = "/api/scrimmages/"
# Two reference players: with the bot, the three seats oh-hell needs at least.
PAIR = ["random", "heuristic"]


@pytest.fixture
def mine(make_bot, owner) -> list[Bot]:
    """Two active bots of the owner: one to practise, one to be its opponent."""
    return [make_bot(owner, name=f"mine-{i}", status="active") for i in range(2)]


@pytest.fixture
def theirs(make_bot, other_user) -> Bot:
    """Another owner's active bot, not accepting scrimmages (the default)."""
    return make_bot(other_user, name="theirs", status="active")


def ask(client: APIClient, bot: Bot, **fields: Any) -> Any:
    body = {"bot": bot.pk, "variant": "oh-hell", **fields}
    return client.post(URL, body, format="json")


def test_a_scrimmage_is_queued_with_202_and_its_url_to_poll(owner_client, mine, oh_hell) -> None:
    answer = ask(
        owner_client,
        mine[0],
        opponents=[mine[1].pk],
        reference_players=["random", "heuristic"],
        matches=3,
    )
    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert answer["Location"] == body["url"]
    assert body["url"].endswith(f"/api/scrimmages/{body['id']}/")
    assert body["status"] == "queued" and body["match_count"] == 3
    assert [o["name"] for o in body["opponents"]] == [
        "mine-1",
        "reference:random",
        "reference:heuristic",
    ]
    assert [o["reference_player"] for o in body["opponents"]] == ["", "random", "heuristic"]
    tables = [[s["bot_name"] for s in m["seats"]] for m in body["matches"]]
    # The seats rotate one place a match, so the bot plays from every seat in turn.
    assert tables[0] == ["mine-0", "mine-1", "reference:random", "reference:heuristic"]
    assert tables[1] == ["mine-1", "reference:random", "reference:heuristic", "mine-0"]
    assert tables[2] == ["reference:random", "reference:heuristic", "mine-0", "mine-1"]
    assert all(m["scrimmage"] == body["id"] and m["seed"] is None for m in body["matches"])
    polled = owner_client.get(body["url"]).json()
    assert polled["id"] == body["id"] and len(polled["matches"]) == 3
    listed = owner_client.get(URL).json()
    assert [s["id"] for s in listed["results"]] == [body["id"]]


def test_a_fixed_seed_deals_the_documented_seeds_and_never_the_seed_itself(
    owner_client, mine, oh_hell
) -> None:
    answer = ask(owner_client, mine[0], reference_players=["random", "search"], matches=2, seed=7)
    assert answer.status_code == 202, answer.json()
    matches = Match.objects.filter(scrimmage_id=answer.json()["id"]).order_by("round")
    assert [m.seed for m in matches] == [scrimmage_deal_seed(7, 0), scrimmage_deal_seed(7, 1)]
    assert 7 not in {m.seed for m in matches}
    assert answer.json()["seed"] == 7


def test_the_documented_derivation_gives_the_deal_seeds() -> None:
    digest = hashlib.sha256(b"ohhell scrimmage deal:42:0").hexdigest()
    assert scrimmage_deal_seed(42, 0) == int(digest[:16], 16) >> 1
    docs = (Path(__file__).resolve().parents[3] / "docs" / "api.md").read_text()
    assert "printf %s 'ohhell scrimmage deal:42:0' | sha256sum | cut -c1-16" in docs


def test_a_seed_typed_from_a_ladders_deal_deals_other_cards(owner_client, mine, oh_hell) -> None:
    ladder, _ = Ladder.objects.get_or_create(variant=oh_hell)
    typed = deal_seed(3, ladder.deal_salt)  # as if revealed on a ladder match's page
    answer = ask(owner_client, mine[0], reference_players=PAIR, matches=2, seed=typed)
    seeds = set(
        Match.objects.filter(scrimmage_id=answer.json()["id"]).values_list("seed", flat=True)
    )
    assert typed not in seeds and deal_seed(typed, ladder.deal_salt) not in seeds


def test_another_owners_bot_plays_only_once_its_owner_accepts_scrimmages(
    owner_client, other_client, mine, theirs, oh_hell
) -> None:
    refused = ask(owner_client, mine[0], opponents=[theirs.pk], reference_players=["random"])
    assert refused.status_code == 400
    assert "does not accept scrimmages" in refused.json()["error"]["detail"]["opponents"][0]
    assert not Scrimmage.objects.exists()
    flag = other_client.patch(
        f"/api/bots/{theirs.pk}/", {"accepts_scrimmages": True}, format="json"
    )
    assert flag.status_code == 200 and flag.json()["accepts_scrimmages"] is True
    accepted = ask(owner_client, mine[0], opponents=[theirs.pk], reference_players=["random"])
    assert accepted.status_code == 202, accepted.json()


def test_only_the_owner_sets_the_flag_and_it_is_off_by_default(
    owner_client, other_client, theirs
) -> None:
    assert other_client.get(f"/api/bots/{theirs.pk}/").json()["accepts_scrimmages"] is False
    answer = owner_client.patch(
        f"/api/bots/{theirs.pk}/", {"accepts_scrimmages": True}, format="json"
    )
    assert answer.status_code == 403
    assert Bot.objects.get(pk=theirs.pk).accepts_scrimmages is False


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"reference_players": ["random"], "matches": 11}, "matches", "from 1 to 10"),
        ({"reference_players": ["random"], "matches": 0}, "matches", ""),
        ({"reference_players": ["stockfish"]}, "reference_players", ""),
        ({"reference_players": ["random", "random"]}, "reference_players", "twice"),
        ({}, "opponents", "at least one opponent"),
        ({"opponents": [999999], "reference_players": ["random"]}, "opponents", "no bot"),
        ({"reference_players": ["random"], "seed": -1}, "seed", ""),
        ({"reference_players": ["random"], "variant": "no-such-variant"}, "variant", ""),
        ({"reference_players": ["random"], "time_bank_ms": -1}, "time_bank_ms", ""),
        (
            {"reference_players": ["random"], "time_bank_ms": MAX_TIME_BANK_MS + 1},
            "time_bank_ms",
            str(MAX_TIME_BANK_MS),
        ),
        ({"reference_players": ["random"], "time_bank_ms": "500"}, "time_bank_ms", ""),
    ],
)
def test_a_refusal_names_the_field(owner_client, mine, oh_hell, fields, field, words) -> None:
    answer = ask(owner_client, mine[0], **fields)
    assert answer.status_code == 400, answer.json()
    detail = answer.json()["error"]["detail"]
    assert field in detail, detail
    assert words.lower() in str(detail[field]).lower()


def test_the_bot_must_be_yours_and_active(
    owner_client, mine, theirs, make_bot, owner, oh_hell
) -> None:
    answer = ask(owner_client, theirs, reference_players=["random"])
    assert answer.status_code == 400 and "not yours" in answer.json()["error"]["detail"]["bot"][0]
    pending = make_bot(owner, name="pending-one")
    answer = ask(owner_client, pending, reference_players=["random"])
    assert answer.status_code == 400 and "active" in answer.json()["error"]["detail"]["bot"][0]
    answer = ask(owner_client, mine[0], opponents=[mine[0].pk])
    assert "its own opponent" in answer.json()["error"]["detail"]["opponents"][0]


def test_more_seats_than_the_variant_allows_are_refused_naming_opponents(
    owner_client, make_bot, owner, mine, oh_hell
) -> None:
    most = oh_hell.to_engine().max_players
    many = [make_bot(owner, name=f"many-{i}", status="active") for i in range(most)]
    answer = ask(owner_client, mine[0], opponents=[b.pk for b in many])
    assert answer.status_code == 400
    assert f"{most + 1} seats" in answer.json()["error"]["detail"]["opponents"][0]


def test_the_days_quota_answers_429_with_retry_after_until_the_next_utc_day(
    owner_client, mine, oh_hell, settings
) -> None:
    settings.SCRIMMAGE_MATCHES_PER_DAY = 3
    assert ask(owner_client, mine[0], reference_players=PAIR, matches=2).status_code == 202
    refused = ask(owner_client, mine[0], reference_players=PAIR, matches=2)
    assert refused.status_code == 429
    wait = int(refused["Retry-After"])
    until = (next_utc_day(datetime.now(UTC)) - datetime.now(UTC)).total_seconds()
    assert until - 5 <= wait <= until + 5
    error = refused.json()["error"]
    assert error["retry_after"] == wait and "matches" in error["detail"]
    assert Scrimmage.objects.count() == 1
    # What is left of the day may still be asked for.
    assert ask(owner_client, mine[0], reference_players=PAIR, matches=1).status_code == 202
    assert ask(owner_client, mine[0], reference_players=PAIR, matches=1).status_code == 429


def test_the_quota_is_per_account(
    owner_client, mine, make_bot, other_user, oh_hell, settings
) -> None:
    settings.SCRIMMAGE_MATCHES_PER_DAY = 1
    assert ask(owner_client, mine[0], reference_players=PAIR).status_code == 202
    theirs = make_bot(other_user, name="their-practice", status="active")
    assert ask(client_for(other_user), theirs, reference_players=PAIR).status_code == 202


@pytest.fixture
def played(owner_client, mine, oh_hell) -> Scrimmage:
    """A scrimmage of one match, played and recorded as a worker would."""
    answer = ask(owner_client, mine[0], opponents=[mine[1].pk], reference_players=["heuristic"])
    scrimmage = Scrimmage.objects.get(pk=answer.json()["id"])
    play_and_record(scrimmage.matches.get())
    return scrimmage


def test_a_scrimmage_changes_no_rating_and_no_leaderboard(
    played, owner_client, anonymous_client
) -> None:
    assert ratings_apply_pending() == 1
    match = played.matches.get()
    assert match.status == MatchStatus.FINISHED
    assert match.rated and match.rating_sequence is None
    assert not Rating.objects.exists() and not RatingHistory.objects.exists()
    board = anonymous_client.get("/api/leaderboard/?variant=oh-hell").json()
    assert board["results"] == []
    # Nor the batch ranks beside the leaderboard: a scrimmage is no rated match to fit.
    assert rank_intervals_fit_all() == {"fitted": 0, "current": 0}
    assert not RankFit.objects.exists()
    intervals = anonymous_client.get("/api/leaderboard/intervals/?variant=oh-hell").json()
    assert intervals["results"] == []
    shown = owner_client.get(f"/api/matches/{match.pk}/").json()
    assert shown["rated"] is False and shown["scrimmage"] == played.pk


def test_nobody_but_the_owner_and_staff_sees_a_scrimmage_or_its_matches(
    played, owner_client, other_client, anonymous_client, staff_client, owner, other_user
) -> None:
    match = played.matches.get()
    for stranger in (other_client, anonymous_client):
        assert stranger.get(f"{URL}{played.pk}/").status_code in (401, 403, 404)
        assert stranger.get(f"/api/matches/{match.pk}/").status_code == 404
        assert stranger.get(f"/api/matches/{match.pk}/replay/").status_code == 404
        listed = stranger.get("/api/matches/").json()["results"]
        assert match.pk not in [m["id"] for m in listed]
    assert other_client.get(URL).json()["results"] == []
    assert owner_client.get(f"/api/matches/{match.pk}/replay/").status_code == 200
    assert staff_client.get(f"{URL}{played.pk}/").status_code == 200
    assert staff_client.get(f"/api/matches/{match.pk}/").status_code == 200
    # Not on any public list, even the owner's: the scrimmage lists its matches.
    assert match.pk not in [m["id"] for m in owner_client.get("/api/matches/").json()["results"]]
    pages = Client()
    pages.force_login(other_user)
    assert pages.get(f"/matches/{match.pk}/").status_code == 404
    assert pages.get(f"/my/scrimmages/{played.pk}/").status_code == 404
    assert Client().get(f"/matches/{match.pk}/").status_code == 404
    public_bot = Client().get(f"/bots/{played.bot_id}/").content.decode()
    assert f"/matches/{match.pk}/" not in public_bot
    assert Client().get("/matches/").content.decode().count(f"/matches/{match.pk}/") == 0
    pages.force_login(owner)
    assert pages.get(f"/matches/{match.pk}/").status_code == 200
    assert pages.get(f"/my/scrimmages/{played.pk}/").status_code == 200


def test_an_opponents_owner_sees_only_that_their_bot_played_a_scrimmage(
    owner_client, mine, make_bot, other_user, oh_hell
) -> None:
    theirs = make_bot(other_user, name="sparring", status="active", accepts_scrimmages=True)
    answer = ask(owner_client, mine[0], opponents=[theirs.pk], reference_players=["random"])
    scrimmage = Scrimmage.objects.get(pk=answer.json()["id"])
    match = scrimmage.matches.get()
    play_and_record(match, faults=True)
    pages = Client()
    pages.force_login(other_user)
    page = pages.get(f"/my/bots/{theirs.pk}/").content.decode()
    assert "It has played 1 match of other owners' scrimmages" in page
    assert f"/matches/{match.pk}/" not in page and "mine-0" not in page


def test_reference_bots_are_made_once_and_never_health_checked(owner_client, mine, oh_hell) -> None:
    for _ in range(2):
        ask(owner_client, mine[0], reference_players=list(ReferencePlayer.values))
    house = Bot.objects.exclude(reference_player="")
    assert sorted(b.reference_player for b in house) == sorted(ReferencePlayer.values)
    assert {b.owner.username for b in house} == {"reference players"}
    assert not any(b.owner.has_usable_password() for b in house)
    signup = Client().post(
        "/api/auth/signup/",
        {"username": "reference players", "password": "a-long-test-passphrase-42"},
        content_type="application/json",
    )
    assert signup.status_code == 400


def test_the_reference_players_are_the_engines() -> None:
    from engine.players import PLAYERS

    assert set(ReferencePlayer.values) == set(PLAYERS)


def test_a_scrimmage_can_be_played_by_a_second_owner_in_a_custom_variant(
    mine, owner_client, short_variant
) -> None:
    answer = owner_client.post(
        URL,
        {"bot": mine[0].pk, "variant": short_variant.pk, "reference_players": ["random", "search"]},
        format="json",
    )
    assert answer.status_code == 202, answer.json()
    assert answer.json()["variant"] == short_variant.name


def test_every_match_of_a_scrimmage_has_the_time_bank_asked_for(
    owner_client, mine, oh_hell
) -> None:
    answer = ask(owner_client, mine[0], reference_players=PAIR, matches=2, time_bank_ms=2500)
    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert body["time_bank_ms"] == 2500
    scrimmage = Scrimmage.objects.get(pk=body["id"])
    assert scrimmage.time_bank_ms == 2500
    assert set(scrimmage.matches.values_list("time_bank_ms", flat=True)) == {2500}
    # None at all, as a competition may give.
    none = ask(owner_client, mine[0], reference_players=PAIR, time_bank_ms=0).json()
    assert none["time_bank_ms"] == 0
    assert Match.objects.get(scrimmage_id=none["id"]).time_bank_ms == 0


def test_a_scrimmage_left_without_a_time_bank_has_the_competitions_default(
    owner_client, mine, oh_hell
) -> None:
    body = ask(owner_client, mine[0], reference_players=PAIR).json()
    assert body["time_bank_ms"] == DEFAULT_TIME_BANK_MS
    assert Match.objects.get(scrimmage_id=body["id"]).time_bank_ms == DEFAULT_TIME_BANK_MS


def test_the_practice_page_asks_for_the_time_bank(owner, mine, oh_hell) -> None:
    pages = Client()
    pages.force_login(owner)
    url = f"/my/bots/{mine[0].pk}/practice/"
    form = {"reference_players": PAIR, "variant": oh_hell.name, "matches": 1}
    assert 'name="time_bank_ms"' in pages.get(url).content.decode()
    refused = pages.post(url, {**form, "time_bank_ms": MAX_TIME_BANK_MS + 1})
    assert refused.status_code == 400 and not Scrimmage.objects.exists()
    assert "time_bank_ms" in refused.context["form"].errors
    assert pages.post(url, {**form, "time_bank_ms": 700}).status_code == 302
    assert pages.post(url, {**form, "time_bank_ms": ""}).status_code == 302
    banks = Scrimmage.objects.order_by("pk").values_list("time_bank_ms", flat=True)
    assert list(banks) == [700, DEFAULT_TIME_BANK_MS]
    assert set(Match.objects.values_list("time_bank_ms", flat=True)) == {
        700,
        DEFAULT_TIME_BANK_MS,
    }
