"""Where every seed comes from, and when it is shown.

Tournament seeds and ladder deal seeds are drawn from the operating system's CSPRNG. A match's
deal seed is keyed from its fixture's seed with a server secret (HMAC-SHA256 under a key
derived from ``SECRET_KEY``), so fixtures that share a seed (the rotations of a duplicate
group) share their deal, while nobody without the key (organisers who chose a tournament seed
included) can compute a deal from anything public.

Until a match has ended only its commitment ``seed_sha256`` (engine/seeds.py) is published; its
seed is revealed once it is finished or cancelled and no other match of its duplicate group is
still to be played. A tournament's seed is revealed once the tournament is finished or cancelled.

A match the platform gives back after a failed attempt (tournaments/services/matches.py,
``_release``) is dealt anew with ``new_seed``, since the attempt's bots saw part of its deal. The
voided deal (``VoidedDeal``) is listed with the commitment it had, but the attempt may still be
playing on and its late outcome may still count, so its seed is revealed under the match's own
rule (``match_seed_revealed`` in tournaments/selectors/matches.py, the one place that decides):
once the match has ended. A rotation of a duplicate group keeps the group's deal, which every
rotation plays: duplicate play is for trusted bots.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings

from engine.seeds import seed_text


def new_seed() -> int:
    """Draw a fresh 63-bit seed from the CSPRNG."""
    return secrets.randbits(63)


def _deal_key() -> bytes:
    return hmac.new(settings.SECRET_KEY.encode(), b"ohhell deal seeds", hashlib.sha256).digest()


def deal_seed(fixture_seed: int) -> int:
    """The 63-bit seed that deals a fixture's match, keyed from the fixture's seed."""
    digest = hmac.new(_deal_key(), seed_text(fixture_seed).encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1
