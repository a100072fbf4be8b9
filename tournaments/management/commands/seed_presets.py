"""Store the engine's preset variants; safe to run any number of times."""

from django.core.management.base import BaseCommand

from engine import PRESETS
from tournaments.services.ladders import ladder_ensure_default
from tournaments.services.variants import variants_seed_presets


class Command(BaseCommand):
    help = (
        "Store the rules engine's preset variants in the database, with the oh-hell ladder "
        "(idempotent)."
    )

    def handle(self, *args: object, **options: object) -> None:
        added = variants_seed_presets()
        total = len(PRESETS)
        if added:
            self.stdout.write(f"Preset variants: {added} added, all {total} stored.")
        else:
            self.stdout.write(f"Preset variants: all {total} stored already.")
        if ladder_ensure_default() is not None:
            self.stdout.write("The oh-hell ladder is switched on.")
