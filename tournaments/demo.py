"""The demo: reference bots served over HTTP, registered, verified and played in a tournament.

Used by ``manage.py demo`` (the README's first command). Bots run in a background thread of
the demo process on loopback ports; matches go through the normal worker path: the local Celery
worker ./run starts on the embedded defaults, Celery workers when Redis is configured.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from django.contrib.auth.models import Group, User
from django.db import transaction

from arena.botserver import make_app
from tournaments.models import (
    ORGANISERS_GROUP,
    Bot,
    BotStatus,
    SharedHost,
    Tournament,
    TournamentFormat,
    TournamentStatus,
    Variant,
    is_email_confirmed,
)
from tournaments.services.bots import bot_register, bot_verify
from tournaments.services.ladders import bot_set_ladder_opt_in
from tournaments.services.tournaments import tournament_create, tournament_start
from tournaments.services.users import user_mark_email_confirmed

DEMO_USER = "demo"


@dataclass(frozen=True)
class DemoBot:
    """One reference player of the demo roster, with the options that set its strength."""

    name: str
    player: str
    options: tuple[tuple[str, Any], ...] = ()


ROSTER = (
    DemoBot("searcher", "search", (("samples", 6),)),
    DemoBot("steady-heuristic", "heuristic"),
    DemoBot("jittery-heuristic", "heuristic", (("noise", 0.25),)),
    DemoBot("wild-heuristic", "heuristic", (("noise", 0.6),)),
    DemoBot("random-alice", "random"),
    DemoBot("random-bob", "random"),
)


class BotHost:
    """Serve the roster on loopback from a background thread, one port per bot."""

    def __init__(self, roster: tuple[DemoBot, ...] = ROSTER, host: str = "127.0.0.1") -> None:
        self.roster = roster
        self.host = host
        self.urls: dict[str, str] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runners: list[web.AppRunner] = []

    def start(self) -> BotHost:
        """Start serving; return once every bot listens."""
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    def stop(self) -> None:
        """Stop every bot server."""
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)

    async def _start(self) -> None:
        for seed, bot in enumerate(self.roster, start=1):
            app = make_app(bot.player, seed=seed, **dict(bot.options))
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, self.host, 0)
            await site.start()
            port = runner.addresses[0][1]  # the port the system picked
            self.urls[bot.name] = f"http://{self.host}:{port}/"
            self._runners.append(runner)

    async def _stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()


def demo_user() -> User:
    """The organiser who owns the demo bots and tournaments."""
    user, created = User.objects.get_or_create(username=DEMO_USER)
    if created:
        user.set_unusable_password()
        user.save()
    user.groups.add(Group.objects.get(name=ORGANISERS_GROUP))
    return user


def house_owner(name: str) -> User:
    """The account of one reference bot: each has its own, as the ladders seat at most one bot
    of an owner at a table; it accepts the demo organiser's invitations. Its address (under
    the reserved .invalid domain: no mail goes there) is confirmed, so the ladders seat it."""
    username = f"{DEMO_USER}-{name}"
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
    if not user.email:
        user.email = f"{username}@demo.invalid"
    user.save()
    if not is_email_confirmed(user):
        user_mark_email_confirmed(user=user)
    return user


def register_roster(urls: dict[str, str], say: Callable[[str], None]) -> list[Bot]:
    """Register (or re-point) each demo bot at its URL and verify it with ``hello``."""
    bots = []
    for name, url in urls.items():
        owner = house_owner(name)
        bot = Bot.objects.filter(name=name).first()
        if bot is None:
            bot, _secret = bot_register(
                owner=owner, name=name, endpoint_url=url, accept_invitations=True
            )
        else:
            Bot.objects.filter(pk=bot.pk).update(
                endpoint_url=url, owner=owner, accept_invitations=True
            )
            bot.refresh_from_db()
        check = bot_verify(bot=bot)
        bot.refresh_from_db()
        state = "ok" if check.ok else f"FAILED ({check.error_kind})"
        say(f"  {name:<18} {url:<28} hello {state}, {bot.status}")
        bots.append(bot)
    return [b for b in bots if b.status == BotStatus.ACTIVE]


def roster_on_ladders(bots: list[Bot], *, on: bool) -> None:
    """Put the demo bots on the ladders (while the demo serves them) or take them off.

    Their host (loopback, where a developer's own bot runs too) is listed as a shared host, so
    bots there are not one team by address: see it in the admin under "Shared hosts".
    """
    if on:
        for address in {urlsplit(bot.endpoint_url).hostname for bot in bots} - {None}:
            SharedHost.objects.get_or_create(
                address=address, defaults={"note": "the reference bots of manage.py demo"}
            )
    for bot in bots:
        bot_set_ladder_opt_in(bot=bot, enabled=on)


def finished_demo_tournament(*, variant_name: str) -> Tournament | None:
    """The latest demo tournament of the variant that was played to the end, if any."""
    return (
        Tournament.objects.filter(
            organiser__username=DEMO_USER,
            variant__name=variant_name,
            status=TournamentStatus.FINISHED,
        )
        .order_by("-finished_at", "-pk")
        .first()
    )


def start_tournament(bots: list[Bot], *, variant_name: str, rounds: int) -> Tournament:
    """Create and start a round robin between the demo bots."""
    variant = Variant.objects.get(name=variant_name)
    number = Tournament.objects.filter(organiser__username=DEMO_USER).count() + 1
    with transaction.atomic():
        tournament = tournament_create(
            organiser=demo_user(),
            name=f"Demo cup {number}",
            description="Reference bots of graded strength, played by the demo.",
            variant=variant,
            format=TournamentFormat.ROUND_ROBIN,
            bot_ids=[b.pk for b in bots],
            table_size=4,
            time_limit_ms=1000,
            rounds=rounds,
        )
        # The operator runs the demo, as staff would mark a tournament rated: its leaderboard
        # of the reference bots is what the demo shows.
        tournament.rated = True
        tournament.save(update_fields=["rated"])
    return tournament_start(tournament=tournament)
