"""One owner's four bots served by one server that shares hands between them, on a ladder with
other owners' bots, played by real Celery workers and beat: the owner's bots never share a
table, so the sharing never has a hand to work with, the beneficiary does no better than honest
bots of its strength, and the scan beat runs on the bulk queue flags nobody."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from django.db.models import Count, Q

from tests.support.colluding import BENEFICIARY, ColludingBots
from tests.support.users import ladder_teams_apart
from tests.support.workers import needs_postgres_and_redis, wait_for
from tournaments.models import (
    Bot,
    CollusionFlag,
    CollusionScan,
    Ladder,
    LadderStatus,
    Match,
    MatchSeat,
    MatchStatus,
)
from tournaments.services.ladders import ladder_pause

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]
MATCHES = 30
BENEFICIARY_MATCHES = 8


def _binomial_tail(successes: int, trials: int, p: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, p)."""
    return sum(
        math.comb(trials, k) * p**k * (1 - p) ** (trials - k) for k in range(successes, trials + 1)
    )


def test_one_owners_bots_sharing_hands_never_meet_and_gain_nothing_on_a_ladder(
    presets, short_variant, make_bot, owner, example_bots, loopback_allowed, start_worker
) -> None:
    # The only ladder running: the opted-in bots play its short matches, nothing else.
    Ladder.objects.update(status=LadderStatus.PAUSED)
    ladder = Ladder.objects.create(variant=short_variant, table_size=3, time_limit_ms=2000)
    honest = [
        make_bot(
            owner,
            name=f"honest-{i}",
            endpoint_url=f"{example_bots.urls['heuristic']}/h{i}",
            status="active",
            ladder_opt_in=True,
        )
        for i in range(6)
    ]
    ladder_teams_apart(honest)  # each of its own owner; loopback is listed as a shared host
    with ColludingBots(4) as server:
        team = [
            make_bot(
                owner,
                name=f"team-{name}",
                endpoint_url=f"{server.url}/{name}",
                status="active",
                ladder_opt_in=True,
            )
            for name in server.names
        ]
        beneficiary = team[server.names.index(BENEFICIARY)]
        quotas = {"LADDER_MAX_BOTS_PER_OWNER": "4", "LADDER_MAX_TABLES_PER_OWNER": "4"}
        scan = {
            "COLLUSION_SECONDS": "10",
            "COLLUSION_MIN_TABLES": "5",
            "COLLUSION_FALSE_DISCOVERY_RATE": "0.0001",
        }
        start_worker("all", concurrency=3, env={"LADDER_MATCHES_IN_FLIGHT": "3", **quotas, **scan})
        start_worker("beat", beat=True, env=scan)
        rated = Match.objects.filter(ladder=ladder, status=MatchStatus.FINISHED, rated=True)
        wait_for(
            lambda: (
                rated.count() >= MATCHES
                and rated.filter(seats__bot=beneficiary).count() >= BENEFICIARY_MATCHES
            ),
            240,
            f"{MATCHES} rated ladder matches, {BENEFICIARY_MATCHES} of them the beneficiary's",
        )
        ladder_pause(ladder=ladder)
        finished = list(
            rated.annotate(of_team=Count("seats", filter=Q(seats__bot__in=team))).values_list(
                "pk", "of_team"
            )
        )
        # The scan that beat sends every 10 s, once it has read these matches.
        wait_for(
            lambda: CollusionScan.objects.filter(
                variant=short_variant, matches__gte=len(finished)
            ).exists(),
            120,
            "a collusion scan of the finished matches",
        )

    # No table seated two of the owner's bots, so the server never saw two at one match and
    # never answered with the beneficiary's hand.
    assert max(of_team for _, of_team in finished) <= 1
    assert sum(1 for _, of_team in finished if of_team) > 0  # the team did play
    assert server.shared.together == set()
    assert server.shared.helped == 0

    # The beneficiary wins no more often than honest bots of its strength (the same heuristic):
    # its wins are no surprise at one in ten thousand against their pooled share.
    ids = [pk for pk, _ in finished]
    seats = MatchSeat.objects.filter(match_id__in=ids).values_list("bot_id", "rank")
    firsts = Counter(bot for bot, rank in seats if rank == 1)
    played = Counter(bot for bot, _ in seats)
    honest_ids = {b.pk for b in honest}
    share = sum(firsts[b] for b in honest_ids) / sum(played[b] for b in honest_ids)
    assert played[beneficiary.pk] >= BENEFICIARY_MATCHES
    tail = _binomial_tail(firsts[beneficiary.pk], played[beneficiary.pk], share)
    assert tail > 1e-4, (firsts[beneficiary.pk], played[beneficiary.pk], share)

    scanned = CollusionScan.objects.filter(variant=short_variant).get()
    assert scanned.min_tables == 5
    assert not CollusionFlag.objects.filter(scan=scanned).exists()
    assert Bot.objects.filter(pk__in=[b.pk for b in team], ladder_opt_in=True).count() == 4
