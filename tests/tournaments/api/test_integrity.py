"""Deals stay unknowable until played and provably fair afterwards; private endpoint details of
a bot (fault samples, health-check errors, the disabled reason) reach only its owner and staff."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
from django.utils import timezone

from engine import Game, preset
from engine.seeds import seed_matches, seed_sha256, seed_text
from tests.support.api import draft_round_robin, started
from tests.support.users import client_for
from tournaments.models import (
    BotHealthCheck,
    BotStatus,
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    SeatFault,
)
from tournaments.seeds import deal_seed, new_deal_salt

LEAK = "Cannot connect to host 127.0.0.1:18298 http://10.1.2.3:18298/secret/path"


def test_the_canonical_text_and_commitment_of_a_seed() -> None:
    assert seed_text(0) == "0" and seed_text(1234) == "1234"
    assert seed_sha256(1234) == hashlib.sha256(b"1234").hexdigest()
    assert seed_matches(1234, seed_sha256(1234).upper()) and not seed_matches(
        1235, seed_sha256(1234)
    )
    for bad in (-1, True, "12"):
        with pytest.raises(ValueError):
            seed_text(bad)  # type: ignore[arg-type]


def test_deal_seeds_are_keyed_with_the_server_secret_and_the_competitions_salt(settings) -> None:
    salt = new_deal_salt()
    first = deal_seed(42, salt)
    assert first == deal_seed(42, salt) and first != 42 and 0 <= first < 2**63
    assert len(salt) == 32 and new_deal_salt() != salt
    assert deal_seed(42, new_deal_salt()) != first  # another competition, another deal
    settings.SECRET_KEY = "another-deployment-secret"
    assert deal_seed(42, salt) != first  # unknown without the key, even from a known fixture seed


@pytest.fixture
def match_of(make_bot, owner, oh_hell):
    bots = [make_bot(owner, status=BotStatus.ACTIVE) for _ in range(3)]

    def make(status: str, *, group: str = "", seed: int = 987654321) -> Match:
        now = timezone.now()
        ended = status in (MatchStatus.FINISHED, MatchStatus.FAILED)
        match = Match.objects.create(
            variant=oh_hell,
            seed=seed,
            status=status,
            duplicate_group=group,
            started_at=now if ended else None,
            finished_at=now if ended else None,
        )
        for i, bot in enumerate(bots):
            MatchSeat.objects.create(match=match, seat=i, bot=bot)
        return match

    return make


@pytest.mark.parametrize("status", ["queued", "running", "failed"])
def test_a_match_not_ended_shows_only_its_commitment(match_of, status, staff_client) -> None:
    match = match_of(status)
    for client in (client_for(None), staff_client):
        body = client.get(f"/api/matches/{match.pk}/").json()
        assert body["seed"] is None and body["seed_sha256"] == seed_sha256(987654321)
        listed = client.get("/api/matches/").json()["results"][0]
        assert listed["seed"] is None and listed["seed_sha256"] == seed_sha256(987654321)
        assert "987654321" not in client.get(f"/api/matches/{match.pk}/").content.decode()


def test_an_ended_match_reveals_its_seed_matching_the_commitment(
    match_of, anonymous_client
) -> None:
    match = match_of(MatchStatus.FINISHED)
    body = anonymous_client.get(f"/api/matches/{match.pk}/").json()
    assert body["seed"] == 987654321 and seed_matches(body["seed"], body["seed_sha256"])


def test_a_duplicate_rotation_keeps_its_seed_and_replay_until_the_group_has_ended(
    match_of, anonymous_client
) -> None:
    done = match_of(MatchStatus.FINISHED, group="g1")
    Replay.objects.create(match=done, data={"seed": 987654321})
    other = match_of(MatchStatus.QUEUED, group="g1")
    assert anonymous_client.get(f"/api/matches/{done.pk}/").json()["seed"] is None
    assert anonymous_client.get(f"/api/matches/{done.pk}/replay/").status_code == 404
    page = anonymous_client.get(f"/matches/{done.pk}/").content.decode()
    assert "987654321" not in page and seed_sha256(987654321) in page
    Match.objects.filter(pk=other.pk).update(status=MatchStatus.CANCELLED)
    assert anonymous_client.get(f"/api/matches/{done.pk}/").json()["seed"] == 987654321
    replay = anonymous_client.get(f"/api/matches/{done.pk}/replay/").json()
    assert replay["seed_sha256"] == seed_sha256(987654321)


def test_the_match_page_checks_the_revealed_seed_and_re_deals_the_replay(
    match_of, anonymous_client, tmp_path
) -> None:
    game = Game(preset("oh-hell"), 3, 555)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    match = match_of(MatchStatus.FINISHED, seed=555)
    Replay.objects.create(match=match, data=game.replay())
    page = anonymous_client.get(f"/matches/{match.pk}/").content.decode()
    assert "matches the commitment" in page and "re-deals and re-plays" in page
    download = anonymous_client.get(f"/api/matches/{match.pk}/replay/")
    path = tmp_path / "replay.json"
    path.write_bytes(download.content)
    done = subprocess.run(
        [sys.executable, "-m", "engine.cli", "verify", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 0 and "seed 555 matches its commitment" in done.stdout
    forged = download.content.replace(seed_sha256(555).encode(), seed_sha256(556).encode())
    path.write_bytes(forged)
    done = subprocess.run(
        [sys.executable, "-m", "engine.cli", "verify", str(path)], capture_output=True, text=True
    )
    assert done.returncode != 0 and "does not match its commitment" in done.stderr


def test_a_tournament_reveals_its_seed_once_it_has_ended(organiser, oh_hell, make_bot) -> None:
    bots = [make_bot(organiser, status=BotStatus.ACTIVE) for _ in range(3)]
    tournament = draft_round_robin(organiser, oh_hell, bots, name="sealed", table_size=3, seed=4242)
    client = client_for(organiser)
    body = client.get(f"/api/tournaments/{tournament.pk}/").json()
    assert body["seed"] is None and body["seed_sha256"] == seed_sha256(4242)
    assert client.get("/api/tournaments/").json()["results"][0]["seed"] is None
    client.post(f"/api/tournaments/{tournament.pk}/cancel/")
    assert client.get(f"/api/tournaments/{tournament.pk}/").json()["seed"] == 4242


def test_fixture_deals_are_not_the_tournament_seeds_public_derivation(
    organiser, oh_hell, make_bot
) -> None:
    from tournaments.formats import round_robin

    bots = [make_bot(organiser, status=BotStatus.ACTIVE) for _ in range(3)]
    tournament = draft_round_robin(
        organiser, oh_hell, bots, name="known seed", table_size=3, seed=7
    )
    started(client_for(organiser), tournament)
    public = {f.seed for f in round_robin(sorted(b.pk for b in bots), 3, 1, 7)}
    dealt = set(tournament.matches.values_list("seed", flat=True))
    assert dealt == {deal_seed(s, tournament.deal_salt) for s in public} and not dealt & public


@pytest.fixture
def leaky_bot(make_bot, owner, match_of):
    bot = make_bot(
        owner,
        status=BotStatus.DISABLED,
        disabled_cause="health",
        disabled_reason=f"failed 3 health checks in a row; last: connection_error: {LEAK}",
    )
    BotHealthCheck.objects.create(
        bot=bot, ok=False, error_kind="connection_error", error_message=LEAK
    )
    match = match_of(MatchStatus.FINISHED)
    seat = MatchSeat.objects.create(match=match, seat=3, bot=bot)
    SeatFault.objects.create(seat=seat, kind="connection_error", count=1, sample=LEAK)
    bot.leaky_match = match
    return bot


@pytest.mark.parametrize(
    ("who", "private"), [(None, False), ("other_user", False), ("owner", True), ("staff", True)]
)
def test_endpoint_details_reach_only_the_owner_and_staff(leaky_bot, who, private, request) -> None:
    user = None if who is None else request.getfixturevalue(who)
    client = client_for(user)
    bot_body = client.get(f"/api/bots/{leaky_bot.pk}/").json()
    checks = client.get(f"/api/bots/{leaky_bot.pk}/health-checks/").json()
    one = client.get(f"/api/bots/{leaky_bot.pk}/health-checks/{checks[0]['id']}/").json()
    match = client.get(f"/api/matches/{leaky_bot.leaky_match.pk}/").json()
    fault = match["seats"][3]["fault_records"][0]
    assert fault["kind"] == "connection_error" and checks[0]["error_kind"] == "connection_error"
    texts = [bot_body["disabled_reason"], checks[0]["error_message"], one["error_message"]]
    texts.append(fault["sample"])
    if user is not None:
        client.force_login(user)
    pages = [
        client.get(f"/bots/{leaky_bot.pk}/").content.decode(),
        client.get(f"/matches/{leaky_bot.leaky_match.pk}/").content.decode(),
    ]
    if private:
        assert all(LEAK in (text or "") for text in texts)
        assert all("127.0.0.1:18298" in page for page in pages)
    else:
        assert bot_body["disabled_reason"] == "failed health checks"
        assert texts[1:] == [None, None, None]
        assert all("18298" not in page and "secret/path" not in page for page in pages)
        assert "connection" in pages[1]
