"""Leases on work a worker holds: a token naming the attempt, and a heartbeat while it runs.

A match or a recompute is claimed by a conditional UPDATE carrying ``claim_token()``; the
holder beats from a side thread (``Heartbeat``) so that a sweep can tell a dead worker's work
from work still under way (tournaments/services/sweeps.py, tournaments/services/recompute.py).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable

from django.db import DatabaseError, connection

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 5


def hand_back_connection() -> None:
    """Return this thread's database connection to the pool while the thread waits on something
    else (bots, the next beat), so a process's open connections do not grow with the matches it
    plays (config/settings.py pools them). Unpooled, or inside a transaction, it is kept."""
    if connection.settings_dict["OPTIONS"].get("pool") and not connection.in_atomic_block:
        connection.close()


def claim_token() -> str:
    """A token unique to this attempt: host, process and a random part."""
    return f"{socket.gethostname()[:100]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


class Heartbeat:
    """Beat for held work from a side thread, so a dead worker is noticed by the sweeper.

    A beat answering False ends the heartbeat; ``on_false``, if given, is called then (from the
    heartbeat's thread).
    """

    def __init__(
        self,
        beat: Callable[[], bool],
        every: float = HEARTBEAT_SECONDS,
        *,
        on_false: Callable[[], object] | None = None,
    ) -> None:
        self._beat = beat
        self._every = every
        self._on_false = on_false
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Heartbeat:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start beating, every ``every`` seconds from now."""
        self._thread.start()

    def stop(self) -> None:
        """Stop beating and wait for a beat under way to end."""
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._every):
                try:
                    if not self._beat():
                        if self._on_false is not None:
                            self._on_false()
                        return
                    hand_back_connection()
                except DatabaseError as exc:
                    # A dropped connection or a database restart: beat again on a fresh
                    # connection next time rather than let the sweeper take a healthy match.
                    log.warning("heartbeat missed, the database answered: %s", exc)
                    connection.close()
        finally:
            connection.close()
