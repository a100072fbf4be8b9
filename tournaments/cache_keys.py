"""Where the cache keeps what several processes share: one definition for writers and readers."""

from __future__ import annotations

import hashlib


def leaderboard_generation_key(ref: str) -> str:
    """Where the cache keeps a variant's leaderboard generation, by the reference (id or
    name) a request names the variant by."""
    ref = str(int(ref)) if ref.isdecimal() and ref.isascii() else ref.lower()
    return "ohhell:leaderboard-generation:" + hashlib.sha256(ref.encode()).hexdigest()


def recompute_progress_key(recompute_id: int) -> str:
    """Cache key holding [done, total] of a running recompute."""
    return f"ohhell:recompute:{recompute_id}"
