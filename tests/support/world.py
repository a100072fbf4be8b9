"""Realistic dashboard data: bots, a tournament, matches played by the engine, ratings applied."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from engine.players import make_player
from engine.replay import to_replay
from engine.simulate import play_game
from tournaments.models import (
    Bot,
    BotHealthCheck,
    Match,
    MatchSeat,
    MatchStatus,
    Replay,
    Scrimmage,
    ScrimmageOpponent,
    SeatFault,
    Tournament,
    TournamentEntry,
    TournamentStatus,
    Variant,
)
from tournaments.seeds import scrimmage_deal_seed
from tournaments.services.analytics import seat_tallies_write
from tournaments.services.ratings import ratings_apply_pending

# Strong and weak reference players, so the leaderboard has a real order to show.
PLAYERS = ("heuristic", "random")


@dataclass
class World:
    """What ``build_world`` made, for tests to look at."""

    variant: Variant
    bots: list[Bot]
    tournament: Tournament
    finished: list[Match] = field(default_factory=list)
    queued: list[Match] = field(default_factory=list)


def make_bots(n: int, owners: list[User], prefix: str = "bot") -> list[Bot]:
    """Create ``n`` active bots in one statement."""
    Bot.objects.bulk_create(
        Bot(
            owner=owners[i % len(owners)],
            name=f"{prefix}-{i:04d}",
            endpoint_url=f"https://{prefix}{i}.example.org/play",
            secret=f"secret-{prefix}-{i}",
            status="active",
        )
        for i in range(n)
    )
    return list(Bot.objects.filter(name__startswith=f"{prefix}-").order_by("name"))


def queue_match(tournament: Tournament, bots: list[Bot], round_: int) -> Match:
    """A queued match of the tournament with ``bots`` seated in order."""
    match = Match.objects.create(
        tournament=tournament, variant=tournament.variant, round=round_, seed=1000 + round_
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=match, seat=i, bot=bot) for i, bot in enumerate(bots)
    )
    return match


def play_and_record(match: Match, *, when: datetime | None = None, faults: bool = False) -> None:
    """Play the match with reference players and store its results as a worker would."""
    seats = list(match.seats.select_related("bot").order_by("seat"))
    players = [make_player(PLAYERS[s.bot_id % 2], seed=s.bot_id) for s in seats]
    game = play_game(match.variant.to_engine(), len(seats), match.seed, players)
    replay = to_replay(game)
    for seat in seats:
        deals = [d for d in replay["deals"] if d["bids"][seat.seat] is not None]
        seat.score = replay["totals"][seat.seat]
        seat.rank = replay["ranks"][seat.seat]
        seat.bids_total = len(deals)
        seat.bids_exact = sum(d["bids"][seat.seat] == d["tricks_won"][seat.seat] for d in deals)
    if faults:
        seats[-1].faults = 2
        SeatFault.objects.create(
            seat=seats[-1], kind="timeout", count=2, sample="no answer in 1000 ms", latency_ms=1000
        )
    MatchSeat.objects.bulk_update(seats, ["score", "rank", "bids_total", "bids_exact", "faults"])
    Replay.objects.create(match=match, data=replay)
    seat_tallies_write(match=match, seats=seats, replay=replay)
    finished_at = when or timezone.now()
    Match.objects.filter(pk=match.pk).update(
        status=MatchStatus.FINISHED,
        started_at=finished_at - timedelta(seconds=3),
        finished_at=finished_at,
        attempts=1,
    )
    match.refresh_from_db()


def build_world(
    *, owners: list[User], bots: int = 8, finished: int = 12, queued: int = 4, table: int = 4
) -> World:
    """A running round-robin tournament in oh-hell, marked rated, with some matches played
    and rated."""
    variant = Variant.objects.get(name="oh-hell")
    made = make_bots(bots, owners)
    start = timezone.now() - timedelta(hours=2)
    tournament = Tournament.objects.create(
        name="Spring open",
        organiser=owners[0],
        variant=variant,
        format="round_robin",
        status=TournamentStatus.RUNNING,
        table_size=table,
        started_at=start,
        rated=True,
    )
    TournamentEntry.objects.bulk_create(TournamentEntry(tournament=tournament, bot=b) for b in made)
    world = World(variant=variant, bots=made, tournament=tournament)
    for i in range(finished + queued):
        seated = [made[(i + j * 3) % len(made)] for j in range(table)]
        if len({b.pk for b in seated}) < table:
            seated = [made[(i + j) % len(made)] for j in range(table)]
        match = queue_match(tournament, seated, round_=i // 2 + 1)
        if i < finished:
            play_and_record(match, when=start + timedelta(minutes=5 * (i + 1)), faults=i % 5 == 0)
            world.finished.append(match)
        else:
            world.queued.append(match)
    ratings_apply_pending()
    for n, bot in enumerate(made[:3]):
        BotHealthCheck.objects.create(bot=bot, ok=True, latency_ms=40 + n)
        BotHealthCheck.objects.create(
            bot=bot, ok=False, error_kind="timeout", error_message="no answer in 2000 ms"
        )
    return world


def build_history(*, owner: User, matches: int, prefix: str, gap: timedelta) -> list[Bot]:
    """Four bots of oh-hell that have played ``matches`` rated matches together, one every
    ``gap`` up to now, some with faults; the first bot is the one to look at."""
    variant = Variant.objects.get(name="oh-hell")
    bots = make_bots(4, [owner], prefix=prefix)
    tournament = Tournament.objects.create(
        name=f"{prefix} league",
        organiser=owner,
        variant=variant,
        format="round_robin",
        status=TournamentStatus.RUNNING,
        table_size=4,
        started_at=timezone.now() - gap * (matches + 1),
        rated=True,
    )
    TournamentEntry.objects.bulk_create(TournamentEntry(tournament=tournament, bot=b) for b in bots)
    first = timezone.now() - gap * matches
    for i in range(matches):
        seated = bots[i % 4 :] + bots[: i % 4]  # each bot deals first in turn
        match = queue_match(tournament, seated, round_=i + 1)
        play_and_record(match, when=first + gap * i, faults=i % 7 == 3)
    ratings_apply_pending()
    return bots


def played_scrimmage(world: World) -> Scrimmage:
    """A finished scrimmage of one match: the world's first bot against two of its owner's
    other bots, played with reference players and stored as a worker would."""
    bot = world.bots[0]
    opponents = [b for b in world.bots[1:] if b.owner_id == bot.owner_id][:2]
    scrimmage = Scrimmage.objects.create(
        owner=bot.owner, bot=bot, variant=world.variant, match_count=1, seed=5
    )
    ScrimmageOpponent.objects.bulk_create(
        ScrimmageOpponent(scrimmage=scrimmage, bot=b, position=i) for i, b in enumerate(opponents)
    )
    match = Match.objects.create(
        scrimmage=scrimmage, variant=world.variant, round=0, seed=scrimmage_deal_seed(5, 0)
    )
    MatchSeat.objects.bulk_create(
        MatchSeat(match=match, seat=i, bot=b) for i, b in enumerate([bot, *opponents])
    )
    play_and_record(match)
    return scrimmage
