"""A worker process plays many matches at once, none of them holding a thread while it waits.

A match task claims its match, hands the game to the process's event loop and returns at once
(``match_start``), so Celery's threads only claim and start matches; the process's match host
keeps every match it plays on the one loop (arena/runtime.py). What a match costs while it
waits on its bots is a coroutine, never a thread or a database connection:

- matches in flight are bounded by ``MATCH_HOST_CAPACITY``: a task finding the host full waits
  (and its message with it, unacknowledged) until a match ends;
- one heartbeat thread beats for every match the process holds in one UPDATE
  (``matches_heartbeat``), and cuts a match whose outcome can no longer count;
- outcomes are written by ``MATCH_RECORD_THREADS`` threads, so the process's database
  connections are its Celery threads', these and the heartbeat's, however many matches play.

Exactly once is kept as for a match played on a thread of its own: the claim is the same
conditional UPDATE, the write first-writer-wins, and a killed process's matches stop beating, so
the sweeper gives them back and sends them again (tournaments/services/sweeps.py).
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import threading
from dataclasses import dataclass

from django.conf import settings

from arena.match import MatchOutcome
from arena.runtime import StopSignal, worker_loop
from tournaments.leases import Heartbeat, claim_token, hand_back_connection
from tournaments.services.matches import match_claim, matches_heartbeat
from tournaments.services.runs import RunResult, match_game, match_run, match_settle

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Lease:
    """A match the host plays (kept by its attempt's claim token) and the signal that cuts it."""

    match_id: int
    stop: StopSignal


class MatchHost:
    """The matches one process plays on its event loop, their heartbeat and their recording."""

    def __init__(self, *, capacity: int, record_threads: int) -> None:
        self._room = threading.BoundedSemaphore(capacity)
        # By claim token: a match given back and claimed again here may be played twice at once.
        self._leases: dict[str, _Lease] = {}
        self._changed = threading.Condition()
        self._records = concurrent.futures.ThreadPoolExecutor(
            max_workers=record_threads, thread_name_prefix="match-record"
        )
        self._heartbeat = Heartbeat(self._beat)
        self._heartbeat.start()

    def start(self, *, match_id: int) -> RunResult:
        """Claim a match and start playing it; return once it plays (``STARTED``), or at once
        when it is not claimable. Waits while the host plays ``capacity`` matches."""
        self._room.acquire()
        token = claim_token()
        try:
            claimed = match_claim(match_id=match_id, token=token)
        except BaseException:
            self._room.release()
            raise
        if not claimed:
            self._room.release()
            return RunResult.NOT_CLAIMABLE
        stop = StopSignal()
        with self._changed:
            self._leases[token] = _Lease(match_id, stop)
        game: concurrent.futures.Future[MatchOutcome]
        try:
            game = worker_loop().submit(match_game(match_id=match_id), stop=stop)
        except Exception as exc:  # loading it failed: recorded as a platform failure
            game = concurrent.futures.Future()
            game.set_exception(exc)
        hand_back_connection()
        game.add_done_callback(lambda done: self._records.submit(self._finish, token, done))
        return RunResult.STARTED

    def in_flight(self) -> int:
        """Matches the host holds now: playing, or being recorded."""
        with self._changed:
            return len(self._leases)

    def drain(self) -> None:
        """Wait until every match the host holds has been played and recorded."""
        with self._changed:
            self._changed.wait_for(lambda: not self._leases)

    def _finish(self, token: str, game: concurrent.futures.Future[MatchOutcome]) -> None:
        """Record a game that ended (on a recording thread), then free its place."""
        with self._changed:
            match_id = self._leases[token].match_id
        try:
            result = match_settle(match_id=match_id, token=token, play=game.result)
            log.debug("match %s: %s", match_id, result)
        except Exception:  # the match stops beating: the sweeper gives it back
            log.exception("match %s could not be settled", match_id)
        finally:
            hand_back_connection()
            with self._changed:
                del self._leases[token]
                self._changed.notify_all()
            self._room.release()

    def _beat(self) -> bool:
        """Beat for every match held in one UPDATE; cut those whose outcome cannot count."""
        with self._changed:
            leases = dict(self._leases)
        alive = matches_heartbeat(leases={token: lease.match_id for token, lease in leases.items()})
        for lease in leases.values():
            if lease.match_id not in alive:
                lease.stop.set()
        return True


_host: MatchHost | None = None
_host_lock = threading.Lock()


def match_host() -> MatchHost:
    """This process's match host, started on first use (and anew in a forked child)."""
    global _host
    with _host_lock:
        if _host is None:
            _host = MatchHost(
                capacity=settings.MATCH_HOST_CAPACITY,
                record_threads=settings.MATCH_RECORD_THREADS,
            )
        return _host


def _forget_host() -> None:
    # A forked child has the parent's host object but none of its threads: it starts its own.
    global _host, _host_lock
    _host = None
    _host_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_host)


def match_start(*, match_id: int, wait: bool) -> RunResult:
    """Claim a match and hand it to this process's match host, or, with ``wait`` (tasks run
    in-process), play and record it before returning."""
    if wait:
        return match_run(match_id=match_id)
    return match_host().start(match_id=match_id)


def match_host_drain() -> None:
    """Let a stopping worker finish the matches its host plays (none started: nothing)."""
    if _host is not None:
        count = _host.in_flight()
        if count:
            log.warning("waiting for the %s matches in play to end before stopping", count)
        _host.drain()
