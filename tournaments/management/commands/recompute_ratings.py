"""Rebuild every rating from the stored results, in rating order, with a progress line."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from tournaments.services.recompute import ratings_recompute, ratings_request_recompute


class Command(BaseCommand):
    help = (
        "Recompute all TrueSkill ratings and their history from the stored match results, in "
        "the order they were first applied; the numbers come out identical. By default it runs "
        "here with a progress line; --background queues it for a worker instead."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--background", action="store_true", help="queue a recompute job for the workers"
        )

    def handle(self, *args, **options) -> None:
        if options["background"]:
            job = ratings_request_recompute().job
            self.stdout.write(f"Recompute job {job.pk} is {job.status}.")
            return
        started = time.monotonic()

        def progress(done: int, total: int) -> None:
            self.stdout.write(f"\r  {done}/{total} matches", ending="")
            self.stdout.flush()

        done = ratings_recompute(progress=progress)
        self.stdout.write(
            f"\nRecomputed {done} rated matches in {time.monotonic() - started:.1f} s."
        )
