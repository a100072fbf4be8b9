"""A tournament whose matches' fields are all fixed, for the tests of its downloads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.contrib.auth.models import User

from tests.support.world import make_bots
from tournaments.models import (
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    Tournament,
    TournamentStatus,
    Variant,
)

AT = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


def fixture_tournament(matches: int) -> Tournament:
    """A tournament of ``matches`` three-seat matches, their fields fixed: finished ones with a
    replay, a cancelled one, a queued one, and a hostile bot name."""
    owner = User.objects.create_user(username="ada", password="a-long-test-passphrase-42")
    bots = make_bots(4, [owner])
    bots[3].name = "=cmd|' /C calc'!A0"
    bots[3].save(update_fields=["name"])
    variant = Variant.objects.get(name="oh-hell")
    tournament = Tournament.objects.create(
        name="Fixed",
        organiser=owner,
        variant=variant,
        format="round_robin",
        status=TournamentStatus.RUNNING,
        table_size=3,
        rated=True,
    )
    for i in range(matches):
        status = [MatchStatus.FINISHED, MatchStatus.CANCELLED, MatchStatus.QUEUED][i % 3]
        match = Match.objects.create(
            tournament=tournament,
            variant=variant,
            round=i // 2,
            seed=7000 + i,
            status=status,
            duplicate_group=f"g{i // 2}" if i % 4 == 0 else "",
            attempts=1 if status == MatchStatus.FINISHED else 0,
            rating_sequence=i if i % 6 == 0 else None,
            rated=i % 6 == 0,
            rated_at=AT if i % 6 == 0 else None,
            started_at=AT + timedelta(minutes=i, seconds=1) if i % 3 != 2 else None,
            finished_at=AT + timedelta(minutes=i, seconds=9) if i % 3 == 0 else None,
        )
        seated = [bots[(i + j) % 4] for j in range(3)]
        MatchSeat.objects.bulk_create(
            MatchSeat(
                match=match,
                seat=j,
                bot=bot,
                score=(10 * j - 5) if status == MatchStatus.FINISHED else None,
                rank=(3 - j) if status == MatchStatus.FINISHED else None,
                faults=j % 2,
                disqualified=j == 2 and i % 5 == 0,
            )
            for j, bot in enumerate(seated)
        )
        if status == MatchStatus.FINISHED:
            Replay.objects.create(match=match, data={"deals": []})
        Match.objects.filter(pk=match.pk).update(created_at=AT + timedelta(minutes=i))
    return tournament
