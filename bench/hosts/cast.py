"""The platform's objects the bench plays with: an organiser, a short variant, the bots, and
the tournaments it starts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.hosts import BOTS, NAME, SHORT_OPTIONS, TABLE


@dataclass
class Cast:
    organiser: Any
    variant: Any
    bot_ids: list[int]


def prepare_cast(hub: str, bot_port: int) -> Cast:
    from django.contrib.auth.models import User

    from tournaments.models import Bot, Variant
    from tournaments.services.variants import variant_create, variants_seed_presets

    variants_seed_presets()
    organiser, _ = User.objects.get_or_create(
        username="bench-hosts", defaults={"is_staff": True, "is_superuser": True}
    )
    variant = Variant.objects.filter(name="bench-hosts-short").first() or variant_create(
        user=organiser, name="bench-hosts-short", base="oh-hell", options=SHORT_OPTIONS
    )
    bot_ids = []
    for i in range(BOTS):
        bot, _ = Bot.objects.update_or_create(
            name=f"bench-hosts-{i}",
            defaults={
                "owner": organiser,
                "endpoint_url": f"http://{hub}:{bot_port}/b{i}",
                "secret": f"bench-secret-{i}",
                "status": "active",
            },
        )
        bot_ids.append(bot.pk)
    return Cast(organiser, variant, bot_ids)


def cancel_leftovers() -> int:
    """Cancel the tournaments an interrupted run left going, and their queued matches.

    Otherwise the sweeper sends their matches again (MATCH_RESEND_SECONDS) and this run's
    workers play them in the middle of a measurement.
    """
    from tournaments.models import Tournament, TournamentStatus
    from tournaments.services.tournaments import tournament_cancel

    left = Tournament.objects.filter(name__startswith=NAME).exclude(
        status__in=[TournamentStatus.FINISHED, TournamentStatus.CANCELLED]
    )
    for tournament in left:
        tournament_cancel(tournament=tournament)
    return len(left)


def start_tournament(cast: Cast, name: str, format: str, rounds: int) -> int:
    from tournaments.services.tournaments import tournament_create, tournament_start

    tournament = tournament_create(
        organiser=cast.organiser,
        name=name,
        variant=cast.variant,
        format=format,
        bot_ids=cast.bot_ids,
        table_size=TABLE,
        rounds=rounds,
    )
    tournament_start(tournament=tournament)
    return tournament.pk


def tournament_done(tournament_id: int) -> bool:
    """Every match ended and rated (failed ones count as ended), the tournament finished."""
    from tournaments.models import Match, MatchStatus, Tournament, TournamentStatus

    if Tournament.objects.get(pk=tournament_id).status != TournamentStatus.FINISHED:
        return False
    matches = Match.objects.filter(tournament_id=tournament_id)
    return not matches.filter(status=MatchStatus.FINISHED, rated=False).exists()


def host_of(claimed_by: str) -> str:
    """The host name a claim token starts with (tournaments.leases.claim_token)."""
    return claimed_by.split(":", 1)[0]
