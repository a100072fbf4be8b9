"""Where the cache keeps what several processes share: one definition for writers and readers."""

from __future__ import annotations

import hashlib


def leaderboard_generation_key(ref: str) -> str:
    """Where the cache keeps a variant's leaderboard generation, by the reference (id or
    name) a request names the variant by."""
    ref = str(int(ref)) if ref.isdecimal() and ref.isascii() else ref.lower()
    return "ohhell:leaderboard-generation:" + hashlib.sha256(ref.encode()).hexdigest()


def history_generation_key(bot_id: int) -> str:
    """Where the cache keeps the generation of a bot's rating history (dropped by each rating
    write of the bot)."""
    return f"ohhell:history-generation:{bot_id}"


def waiting_task_key(task: str, queue: str) -> str:
    """Cache key marking that a run of a coalesced task waits in the broker, by the queues'
    name (tournaments/dispatch.py)."""
    return f"ohhell:waiting-task:{queue}:{task}"


def recompute_progress_key(recompute_id: int) -> str:
    """Cache key holding [done, total] of a running recompute."""
    return f"ohhell:recompute:{recompute_id}"


def _account(username: str) -> str:
    # Case-folded, as sign-up refuses a name that differs from a taken one only in case.
    return hashlib.sha256(username.casefold().encode()).hexdigest()


def sign_in_attempts_key(username: str) -> str:
    """Cache key counting the sign-in attempts of an account since its last success."""
    return "ohhell:sign-in-attempts:" + _account(username)


def sign_in_lockout_key(username: str) -> str:
    """Cache key holding when an account's sign-in lockout ends (a Unix time)."""
    return "ohhell:sign-in-lockout:" + _account(username)


def bot_analytics_key(bot_id: int, variant_id: int) -> str:
    """Cache key holding a bot's analytics in one variant (tournaments/selectors/analytics.py)."""
    return f"ohhell:bot-analytics:{bot_id}:{variant_id}"


def password_reset_mails_key(mailbox: str) -> str:
    """Cache key counting the password-reset mails sent to a mailbox this hour
    (tournaments/mailboxes.py)."""
    return "ohhell:reset-mails:" + hashlib.sha256(mailbox.encode()).hexdigest()
