"""Run the demo end to end, then serve the dashboard: the README's first command calls this."""

from __future__ import annotations

import logging
import os
import signal
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from tournaments.demo import (
    BotHost,
    finished_demo_tournament,
    register_roster,
    roster_on_ladders,
    start_tournament,
)
from tournaments.models import Tournament, TournamentStatus
from tournaments.provisional import is_provisional
from tournaments.selectors.ratings import leaderboard
from tournaments.selectors.tournaments import tournament_progress


def closing_lines(*, port: int, tournament_id: int | None) -> list[str]:
    """Where to open the app, and how to make an admin account (the README's promises)."""
    base = f"http://127.0.0.1:{port}"
    python = os.path.relpath(sys.executable) if sys.executable else "python"
    lines = [f"Dashboard: {base}/"]
    if tournament_id is not None:
        lines.append(f"Tournament: {base}/tournaments/{tournament_id}/")
    return [
        *lines,
        f"API: {base}/api/  (interactive docs: {base}/api/docs/)",
        f"Admin: {base}/admin/  (make an account with: {python} manage.py createsuperuser)",
    ]


class Command(BaseCommand):
    help = (
        "Start reference bots over HTTP, register and verify them, play a round robin through "
        "the worker path, print the leaderboard, then serve the dashboard."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--variant", default="oh-hell", help="preset to play")
        parser.add_argument("--rounds", type=int, default=8, help="matches per bot, at least")
        parser.add_argument("--port", type=int, default=8000, help="port of the dashboard")
        parser.add_argument("--no-serve", action="store_true", help="stop after the leaderboard")
        parser.add_argument(
            "--serve-only",
            action="store_true",
            help="play no tournament: put the reference bots on the ladder and serve (./run serve)",
        )
        parser.add_argument("--timeout", type=int, default=900, help="seconds to wait for play")
        parser.add_argument(
            "--again",
            action="store_true",
            help="play another demo tournament although one was played before",
        )

    def handle(self, *args, **options) -> None:
        say = self.stdout.write
        # In-process tasks would log every task; the progress lines say enough.
        logging.getLogger("celery").setLevel(logging.WARNING)
        logging.getLogger("kombu.connection").setLevel(logging.ERROR)  # the in-memory broker
        call_command("migrate", verbosity=0, interactive=False)
        call_command("seed_presets", verbosity=0)
        # The demo's bots live on loopback; only this process (and workers started for the
        # demo with BOT_ALLOW_LOOPBACK=1) may call them.
        settings.BOT_ALLOW_LOOPBACK = True
        host = BotHost().start()
        say("Reference bots answering over HTTP:")
        bots = register_roster(host.urls, say)
        if len(bots) < 4:
            raise CommandError("fewer than four demo bots passed verification")
        tournament = None if options["serve_only"] else self._play(bots, options)
        if options["no_serve"]:
            host.stop()
            return
        self._serve(bots, options["port"], tournament)

    def _play(self, bots, options) -> Tournament:
        """Play the demo tournament (or show the one played before) and print its leaderboard."""
        say = self.stdout.write
        # Each demo tournament adds rated matches; a second start shows the first one's results.
        tournament = finished_demo_tournament(variant_name=options["variant"])
        if tournament is not None and not options["again"]:
            say(
                f"{tournament.name} was played before: showing its results "
                "(`manage.py demo --again` plays another)."
            )
        else:
            mode = (
                "in-process tasks"
                if settings.CELERY_EAGER
                else "Celery workers"
                if settings.REDIS_URL
                else "a local Celery worker"
            )
            say(f"Playing a round robin of {options['variant']} through {mode} ...")
            tournament = start_tournament(
                bots, variant_name=options["variant"], rounds=options["rounds"]
            )
            self._wait(tournament, options["timeout"])
        self._print_leaderboard(tournament)
        return tournament

    def _serve(self, bots, port: int, tournament: Tournament | None) -> None:
        """Put the bots on the ladders while the dashboard is served, when workers run them."""
        say = self.stdout.write
        say("")
        tournament_id = tournament.pk if tournament is not None else None
        for line in closing_lines(port=port, tournament_id=tournament_id):
            say(line)
        # With workers, the ladders run by themselves: the demo bots are on them while the demo
        # serves them, so a newcomer's bot has opponents as soon as it opts in.
        ladders = not settings.CELERY_TASK_ALWAYS_EAGER
        if ladders:
            roster_on_ladders(bots, on=True)
            say("The reference bots are on the oh-hell ladder: opt a bot in to play them.")
            # Stopped with SIGTERM as with Ctrl-C, so they leave the ladder either way.
            signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
        else:
            say("The ladders do not run with in-process tasks: no reference bots play on them.")
        try:
            call_command("runserver", f"127.0.0.1:{port}", use_reloader=False)
        finally:
            if ladders:
                roster_on_ladders(bots, on=False)

    def _wait(self, tournament, timeout: int) -> None:
        deadline = time.monotonic() + timeout
        last = None
        while True:
            tournament.refresh_from_db()
            progress = tournament_progress(tournament=tournament)
            line = f"  {progress.done}/{progress.total} matches done, {progress.running} running"
            if line != last:
                self.stdout.write(line)
                last = line
            if tournament.status == TournamentStatus.FINISHED:
                return
            if time.monotonic() > deadline:
                raise CommandError(
                    "the tournament did not finish in time; is a worker running? "
                    "(./run starts one; see docs/operations.md)"
                )
            time.sleep(0.5)

    def _print_leaderboard(self, tournament) -> None:
        from tournaments.services.ratings import ratings_apply_pending

        ratings_apply_pending()  # in case the last update is still on its way
        self.stdout.write(f"\nLeaderboard of {tournament.variant.name} (mu - 3 sigma):")
        for place, rating in enumerate(leaderboard(variant=tournament.variant), start=1):
            mark = " (provisional)" if is_provisional(rating.matches) else ""
            self.stdout.write(
                f"  {place:>2}. {rating.bot.name:<18} {rating.conservative:6.2f}  "
                f"(mu {rating.mu:5.2f}, sigma {rating.sigma:4.2f}, {rating.matches} matches){mark}"
            )
