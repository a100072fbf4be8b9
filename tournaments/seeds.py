"""Where every seed comes from, and when it is shown.

Tournament seeds and ladder deal seeds are drawn from the operating system's CSPRNG; an
organiser may choose a tournament's seed instead. A tournament's seed decides its schedule (the
tables, the seatings and the fixtures' seeds, tournaments/formats/), so the same seed, bots and
format give the same schedule again; it does not decide the cards on its own.

A match's deal seed (``deal_seed``) is keyed from its fixture's seed and its competition's deal
salt with a server secret (HMAC-SHA256 under a key derived from ``SECRET_KEY``). The deal salt
(``new_deal_salt``) is 128 random bits drawn for every tournament and every ladder when it is
made, stored on it, never shown and unique in the database. So fixtures of one competition that
share a seed (the rotations of a duplicate group) share their deal, while two competitions never
deal the same cards, even when organisers gave them the same seed; and nobody without the key
(organisers who chose a tournament seed included) can compute a deal from anything public. The
salt is random rather than the competition's id: after a database is restored from a backup,
new competitions take the ids of ones made after the backup, whose deals may have been revealed,
and ids repeat in a copy of the database kept under the same ``SECRET_KEY``. Competitions made
before salts existed were each given a fresh one by migration 0020; their matches keep the
seeds stored on them, whose commitments were published.

A scrimmage (an owner's unrated practice, tournaments/models/scrimmages.py) whose owner fixed its
seed is dealt from ``scrimmage_deal_seed``: a public function of the owner's seed and the match's
number, so the owner can compute every deal and play it again at home, as is theirs to know. It
is never the seed of a ladder's or a tournament's deal, nor tells one: those are keyed with the
server's secret and a competition's salt, so a scrimmage cannot be given one even by an owner who
types a revealed deal seed, or one they guessed (its own hash, under a label of its own, deals
other cards), and learning a scrimmage's deals tells nothing about theirs. A scrimmage without a
fixed seed deals each match from ``new_seed``.

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

DEAL_SALT_BYTES = 16


def new_seed() -> int:
    """Draw a fresh 63-bit seed from the CSPRNG."""
    return secrets.randbits(63)


def new_deal_salt() -> str:
    """Draw a fresh deal salt for a tournament or a ladder: 128 bits from the CSPRNG, in hex."""
    return secrets.token_hex(DEAL_SALT_BYTES)


# The label that keeps scrimmage deals apart from every other use of SHA-256 on a seed.
SCRIMMAGE_DEAL_LABEL = "ohhell scrimmage deal"


def scrimmage_deal_seed(seed: int, number: int) -> int:
    """The 63-bit seed dealing match ``number`` (0, 1, ...) of a scrimmage whose owner fixed
    ``seed``: the first 8 bytes of SHA-256 of ``"ohhell scrimmage deal:<seed>:<number>"``,
    read big-endian and shifted right by one bit (docs/api.md shows the command)."""
    message = f"{SCRIMMAGE_DEAL_LABEL}:{seed_text(seed)}:{number}".encode()
    return int.from_bytes(hashlib.sha256(message).digest()[:8], "big") >> 1


def _deal_key() -> bytes:
    return hmac.new(settings.SECRET_KEY.encode(), b"ohhell deal seeds", hashlib.sha256).digest()


def deal_seed(fixture_seed: int, deal_salt: str) -> int:
    """The 63-bit seed that deals a fixture's match, keyed from the fixture's seed and the deal
    salt of the tournament or ladder it belongs to."""
    message = f"{deal_salt}:{seed_text(fixture_seed)}".encode()
    digest = hmac.new(_deal_key(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1
