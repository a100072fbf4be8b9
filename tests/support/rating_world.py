"""A small world of single matches and duplicate groups whose results the tests write by hand.

Matches are created queued, then finished (seats, replay and time written as a worker would),
failed or retried through the services, so the ratings see every path a real run can take.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from tournaments.formats import rotations
from tournaments.models import (
    Bot,
    BotVersion,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingHistory,
    Replay,
    Tournament,
    Variant,
)
from tournaments.services.bots import bot_new_version
from tournaments.services.recompute import ratings_recompute


@dataclass
class World:
    """A running duplicate tournament whose matches the test finishes, fails and retries."""

    tournament: Tournament
    variant: Variant
    start: datetime = field(default_factory=lambda: timezone.now() - timedelta(days=1))

    @classmethod
    def create(cls, *, organiser: Any, variant: Variant, rated: bool = True) -> World:
        """A tournament staff marked ``rated`` unless told otherwise."""
        tournament = Tournament.objects.create(
            name="world",
            organiser=organiser,
            variant=variant,
            format="duplicate",
            status="running",
            rated=rated,
        )
        return cls(tournament=tournament, variant=variant)

    def single(self, bots: list[Bot]) -> Match:
        """A queued match outside any duplicate group."""
        return self._queued(bots, "")

    def group(self, bots: list[Bot], name: str) -> list[Match]:
        """The queued rotations of one duplicate group (every bot in every seat)."""
        by_id = {b.pk: b for b in bots}
        seatings = rotations([b.pk for b in bots])
        return [self._queued([by_id[pk] for pk in seating], name) for seating in seatings]

    def _queued(self, bots: list[Bot], group: str) -> Match:
        match = Match.objects.create(
            variant=self.variant, tournament=self.tournament, duplicate_group=group
        )
        MatchSeat.objects.bulk_create(
            MatchSeat(match=match, seat=i, bot=bot) for i, bot in enumerate(bots)
        )
        return match

    def finish(self, match: Match, *, minute: float, seed: int = 0) -> None:
        """Record a result: two deals of points drawn from ``seed``, ending at ``minute``."""
        rng = random.Random(seed * 7919 + match.pk)
        seats = list(MatchSeat.objects.filter(match=match).order_by("seat"))
        deals = [{"scores": [rng.randrange(-10, 40) for _ in seats]} for _ in range(2)]
        for seat in seats:
            seat.score = sum(d["scores"][seat.seat] for d in deals)
        MatchSeat.objects.bulk_update(seats, ["score"])
        Replay.objects.update_or_create(
            match=match, defaults={"data": {"players": len(seats), "deals": deals}}
        )
        when = self.start + timedelta(minutes=minute)
        Match.objects.filter(pk=match.pk).update(
            status=MatchStatus.FINISHED, started_at=when, finished_at=when
        )

    def new_version(self, bot: Bot, *, minute: float) -> BotVersion:
        """The owner marks a new version of ``bot`` at ``minute``."""
        bot_new_version(bot=bot)
        version = BotVersion.objects.filter(bot=bot).latest("version")
        version.created_at = self.start + timedelta(minutes=minute)
        version.save(update_fields=["created_at"])
        return version

    def fail(self, match: Match, *, minute: float) -> None:
        """The match ran out of attempts."""
        Match.objects.filter(pk=match.pk).update(
            status=MatchStatus.FAILED,
            attempts=1,
            finished_at=self.start + timedelta(minutes=minute),
        )


def rating_snapshot() -> dict[str, list]:
    """Every rating, history row and match sequence, exactly as stored."""
    return {
        "ratings": list(
            Rating.objects.order_by("bot_id", "variant_id").values_list(
                "bot_id", "variant_id", "mu", "sigma", "matches"
            )
        ),
        "history": list(
            RatingHistory.objects.order_by("sequence", "bot_id", "variant_id").values_list(
                "bot_id",
                "variant_id",
                "match_id",
                "version",
                "sequence",
                "mu_before",
                "sigma_before",
                "mu_after",
                "sigma_after",
                "at",
            )
        ),
        "versions": list(
            BotVersion.objects.order_by("pk").values_list("bot_id", "version", "rating_sequence")
        ),
        "matches": list(
            Match.objects.filter(rated=True)
            .order_by("rating_sequence")
            .values_list("pk", "rating_sequence", "rating_group")
        ),
    }


def assert_live_equals_recompute() -> dict[str, list]:
    """Recompute everything and check it gives the live numbers bit for bit; return them."""
    live = rating_snapshot()
    ratings_recompute()
    again = rating_snapshot()
    assert again == live
    return live
