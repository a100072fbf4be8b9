"""Commitments to deal seeds: a match publishes ``seed_sha256`` before it is played and reveals
``seed`` afterwards; anyone can then check the one against the other and re-deal the cards.

The canonical text of a seed is its value in decimal ASCII digits, with no sign, no leading
zeros (``0`` for zero), no spaces and no newline; the commitment is the SHA-256 of that text in
lower-case hex, e.g. ``printf %s 1234 | sha256sum``.
"""

from __future__ import annotations

import hashlib
import hmac


def seed_text(seed: int) -> str:
    """The canonical text of a seed (a non-negative integer)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a seed is a non-negative integer, not {seed!r}")
    return str(seed)


def seed_sha256(seed: int) -> str:
    """The commitment to a seed: SHA-256 of its canonical text, lower-case hex."""
    return hashlib.sha256(seed_text(seed).encode("ascii")).hexdigest()


def seed_matches(seed: int, commitment: str) -> bool:
    """Tell whether ``seed`` is the seed ``commitment`` was made to."""
    return hmac.compare_digest(seed_sha256(seed), commitment.lower())
