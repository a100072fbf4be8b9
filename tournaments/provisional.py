"""When a rating stops being provisional: one rule for the services, selectors, API and pages.

It reads the ``RATING_PROVISIONAL_MATCHES`` setting, so it lives beside the app rather than in
the Django-free maths (tournaments/maths/ratings.py).
"""

from __future__ import annotations

from django.conf import settings


def provisional_matches() -> int:
    """How many rated units (a match, or a whole duplicate group) settle a rating."""
    return int(settings.RATING_PROVISIONAL_MATCHES)


def is_provisional(matches: int) -> bool:
    """A rating is provisional until the bot has ``provisional_matches()`` rated units."""
    return matches < provisional_matches()
