"""Black box: a bot that reads the whole public API during its matches learns nothing of the deal.

A tournament is created and started through the API by an organiser and played by a real Celery
worker (with its own SECRET_KEY, as a deployment has) against real HTTP bots: three reference
bots and a spying bot (tests/support/spying.py) whose owner, not staff, owns another bot
too. On every request the spy reads the match, tournament, bots, dashboard pages and CSV
downloads from the live server, anonymously and with its owner's token, and tries to rebuild the
deal from every number it finds. At the first request of each deal (bidding is closed, so it
knows only its own hand and the turned card) it predicts every other seat's hand.

Its hits on one seat's hand are then, by chance, a hypergeometric draw per deal; the test asserts
the total is not improbably high for that law (exact tail, below ALPHA), and as a control that the
same spy, reading the API once the seeds are revealed, predicts every hand exactly, which that
bound would have caught.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection
from rest_framework.authtoken.models import Token

from tests.support.spying import (
    Spy,
    chance_tail,
    dealt_hands,
    predict,
    seat_hits,
    serve_spy,
)
from tests.support.users import client_for
from tests.support.workers import wait_for
from tournaments.models import Match, MatchStatus, Replay, Tournament, TournamentStatus
from tournaments.services.variants import variant_create

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not settings.REDIS_URL or connection.vendor == "sqlite",
        reason="needs PostgreSQL and Redis for the worker: set DATABASE_URL and REDIS_URL "
        "(./run test does when they answer on 127.0.0.1)",
    ),
]

# A chance of at most one in a million to fail a platform that leaks nothing.
ALPHA = 1e-6
# The deployment's own secret, which nothing the spy reads contains.
WORKER_SECRET_KEY = "a-deployment-secret-the-bots-never-see-7f3a9c"
ORGANISER_SEED = 4242  # small enough for the spy to invert its commitment


@pytest.fixture
def spy_world(make_bot, organiser, loopback_allowed, example_bots, live_server):
    from tests.support.users import make_user

    spy_owner = make_user("spy-owner")
    make_bot(spy_owner, name="spy-owners-other-bot", status="active")
    token, _ = Token.objects.get_or_create(user=spy_owner)
    spy = Spy(api=live_server.url, token=token.key)
    server = serve_spy(spy)
    spy_bot = make_bot(
        spy_owner,
        name="spy",
        endpoint_url=f"http://127.0.0.1:{server.server_address[1]}/",
        status="active",
        accept_invitations=True,
    )
    rivals = [
        make_bot(organiser, endpoint_url=f"{example_bots.urls['heuristic']}/r{i}", status="active")
        for i in range(3)
    ]
    variant = variant_create(
        user=organiser,
        name="closed-bidding",
        base="oh-hell",
        options={"bidding": "closed", "hook": False, "order": "down"},
    )
    yield spy, spy_bot, rivals, variant
    server.shutdown()
    server.server_close()


def test_a_bot_reading_the_api_during_its_matches_predicts_no_hidden_card_better_than_chance(
    spy_world, organiser, start_worker
) -> None:
    spy, spy_bot, rivals, variant = spy_world
    assert settings.SECRET_KEY != WORKER_SECRET_KEY  # the spy tries the test process's key
    start_worker("spied-on", concurrency=1, env={"SECRET_KEY": WORKER_SECRET_KEY})
    client = client_for(organiser)
    created = client.post(
        "/api/tournaments/",
        {
            "name": "open to all",
            "variant": variant.name,
            "format": "round_robin",
            "bots": [spy_bot.pk, *(r.pk for r in rivals)],
            "table_size": 4,
            "rounds": 1,
            "time_limit_ms": 10_000,  # the spy reads the API before it answers
            "seed": ORGANISER_SEED,
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    tournament_id = created.json()["id"]
    assert client.post(f"/api/tournaments/{tournament_id}/start/").status_code == 202
    wait_for(
        lambda: Tournament.objects.get(pk=tournament_id).status == TournamentStatus.FINISHED,
        600,
        "the tournament to be played",
    )
    matches = list(Match.objects.filter(tournament_id=tournament_id))
    assert len(matches) == 1 and {m.status for m in matches} == {MatchStatus.FINISHED}
    truth = {
        str(m.pk): [
            [set(h) for h in deal["hands"]] for deal in Replay.objects.get(match=m).data["deals"]
        ]
        for m in matches
    }
    assert {str(m.pk) for m in matches} <= {p.match_id for p in spy.predictions}

    # It read a lot, as anyone may, and nothing dealt it its own hand or showed its seed.
    assert len(spy.predictions) == sum(len(deals) for deals in truth.values()) == 10
    assert spy.reads > 500 and len(spy.seeds) > 150, (spy.reads, len(spy.seeds))
    assert spy.salts == set()  # no text shows a competition's deal salt
    assert ORGANISER_SEED in spy.numbers  # the tournament seed, from its commitment
    assert spy.own_seed_shown == [] and spy.found_during_play == []
    by_offset = seat_hits(spy.predictions, truth)
    assert sorted(by_offset) == [1, 2, 3]
    for offset, (hits, draws) in by_offset.items():
        tail = chance_tail(draws, hits)
        print(
            "DIAG",
            offset,
            hits,
            sum(u and s * s / u for u, s in draws),
            tail,
            spy.reads,
            len(spy.seeds),
            spy.requests,
        )
        assert tail >= ALPHA, f"seat +{offset}: {hits} cards right, P(chance) = {tail:.2e}"

    # Control: once the seeds are revealed the same spy finds them and predicts every hand,
    # which the bound above catches.
    control = Spy(api=spy.api, token=spy.token, first_hands=spy.first_hands)
    for match in matches:
        control.learn(control.read_everything(str(match.pk), full=True))
    revealed = [predict(p.body, control.seed_dealing(p.body)) for p in spy.predictions]
    assert all(p.from_seed is not None for p in revealed)
    by_offset = seat_hits(revealed, truth)
    for hits, draws in by_offset.values():
        assert hits == sum(size for _, size in draws)  # every card of every hand
        assert chance_tail(draws, hits) < ALPHA
    # The deals really come from the revealed seeds.
    for p in revealed:
        assert p.from_seed is not None
        assert (
            dealt_hands(p.body["variant"], p.players, p.from_seed, p.deal)[p.deal - 1]
            == truth[p.match_id][p.deal - 1]
        )
