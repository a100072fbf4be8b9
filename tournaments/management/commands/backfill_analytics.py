"""Tally the matches recorded before bot analytics were kept, from their stored replays."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from tournaments.services.analytics import seat_tallies_backfill


class Command(BaseCommand):
    help = (
        "Write the per-seat deal tallies bot analytics read (by hand size and place relative "
        "to the dealer) for every finished match that has none yet, from its replay. Safe to "
        "run again and to stop: each match is tallied in one transaction."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        done = seat_tallies_backfill()
        self.stdout.write(f"Tallied {done} matches.")
