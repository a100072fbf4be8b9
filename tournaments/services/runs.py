"""Running a match: claim it, play it against its bots, record what was played.

An attempt plays on only while its outcome can count: each heartbeat asks whether the match is
still in a state an outcome is written into (``RECORDABLE``), and once it is not (finished by
another attempt, or given an ended status by staff in the admin) the game is cut on the worker
loop, no bot is called again, nothing is recorded and the worker takes its next match.

A dropped connection while recording is tried again while the heartbeat goes on; when the
database stays away longer than the tries, the outcome is handed to the
``tournaments.record_outcome`` task, which tries again until the database is back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    close_old_connections,
    connection,
)

from arena.match import MatchOutcome, Seat, play_match
from arena.runtime import RunStopped, StopSignal, worker_loop
from arena.seats import HttpSeat, LocalSeat
from arena.transport import BotClient
from engine.players import make_player
from engine.variant import Variant as EngineVariant
from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.leases import Heartbeat, claim_token, hand_back_connection
from tournaments.models import Match, MatchSeat, MatchStatus, ReferencePlayer
from tournaments.netpolicy import arena_network_check, bot_limits, bot_network_policy
from tournaments.services.matches import match_claim, match_fail_attempt, match_heartbeat
from tournaments.services.outcomes import PlayedMatch, match_record_outcome

log = logging.getLogger(__name__)


class RunResult(StrEnum):
    """What one attempt to run a match ended in."""

    NOT_CLAIMABLE = "not-claimable"  # another attempt holds it, or it is not queued
    STARTED = "started"  # claimed and handed to the process's match host, which records it
    RECORDED = "recorded"
    MATCH_ENDED = "match-ended"  # ended without this attempt; its outcome could not count
    HANDED_OFF = "handed-off"  # the database was away: the record_outcome task writes it
    REQUEUED = "queued"  # a platform failure gave it back for another attempt
    FAILED = "failed"  # a platform failure on its last attempt
    LOST_CLAIM = "lost-claim"  # a platform failure after the sweeper had taken it back


def _given_back(status: str | None) -> RunResult:
    """What giving a match back after a platform failure (``match_fail_attempt``) came to."""
    if status is None:
        return RunResult.LOST_CLAIM
    return RunResult.FAILED if status == MatchStatus.FAILED else RunResult.REQUEUED


def match_game(*, match_id: int) -> Coroutine[Any, Any, MatchOutcome]:
    """Load a claimed match and return the coroutine that plays it against its bots over HTTP
    on this process's event loop (no writes).

    It shares the loop's keep-alive pool with every other match the process plays. A timeout or
    connection error is charged only while the platform's network check from the settings
    passes (``arena_network_check``).
    """
    match = Match.objects.select_related("variant").get(pk=match_id)
    seats = list(match.seats.select_related("bot").order_by("seat"))
    variant = EngineVariant.from_dict(match.variant.options)
    # The pool's own limits (grace, answer cap) are the deployment's; each call is told the
    # match's time control.
    client = worker_loop().client(limits=bot_limits(), policy=bot_network_policy())
    table = [_seat(client, s, match.seed) for s in seats]
    return play_match(
        variant=variant,
        seed=match.seed,
        seats=table,
        limits=bot_limits(match.time_limit_ms, match.time_bank_ms),
        match_id=str(match.pk),
        network_check=arena_network_check(),
    )


def match_play(*, match_id: int, stop: StopSignal | None = None) -> MatchOutcome:
    """Play a claimed match (``match_game``) and wait for its outcome (no writes).

    Setting ``stop`` cuts the game where it waits, no bot is called again, and ``RunStopped``
    is raised (``WorkerLoop.run``).
    """
    game = match_game(match_id=match_id)
    hand_back_connection()  # the match may wait on its bots for minutes
    return worker_loop().run(game, stop=stop)


# How strong each reference player plays in a scrimmage: the search player samples few deals and
# answers within its budget, since it plays on the worker's event loop (arena/seats.py).
REFERENCE_OPTIONS: dict[str, dict[str, int]] = {
    ReferencePlayer.RANDOM: {},
    ReferencePlayer.HEURISTIC: {},
    ReferencePlayer.SEARCH: {"samples": 6, "max_ms": 100},
}


def _seat(client: BotClient, seat: MatchSeat, match_seed: int) -> Seat:
    """The seat the runner calls: a registered bot over HTTP, or a reference player's house bot
    in-process, seeded from the match's deal and its seat."""
    bot = seat.bot
    if bot.reference_player:
        options = REFERENCE_OPTIONS[bot.reference_player]
        seed = (match_seed + seat.seat) % (2**63)
        return LocalSeat(make_player(bot.reference_player, seed, **options), label=bot.name)
    return HttpSeat(client, bot.endpoint_url, bot.secret, label=bot.name)


def match_run(*, match_id: int, token: str | None = None) -> RunResult:
    """Claim, play and record one match, waiting for all of it; return what happened.

    Tasks run in-process and tests use it; a worker hands its matches to its match host
    instead (tournaments/services/hosting.py), which plays many at once without a thread each.
    """
    token = token or claim_token()
    if not match_claim(match_id=match_id, token=token):
        return RunResult.NOT_CLAIMABLE
    stop = StopSignal()
    # The heartbeat goes on while the outcome is written, so the sweeper does not take a
    # played match away while its final write is tried again.
    with Heartbeat(lambda: match_heartbeat(match_id=match_id, token=token), on_false=stop.set):
        return match_settle(
            match_id=match_id, token=token, play=lambda: match_play(match_id=match_id, stop=stop)
        )


def match_settle(*, match_id: int, token: str, play: Callable[[], MatchOutcome]) -> RunResult:
    """Record what playing a claimed match came to (``play`` gives its outcome or raises).

    Once the heartbeat has found that the match ended without this attempt (finished by
    another, or given an ended status by staff), its outcome could no longer count: the game
    was cut, no bot is called again, nothing is recorded, and the answer is ``MATCH_ENDED``. A
    platform failure gives the match back; a played match is recorded, first writer wins.
    """
    try:
        outcome = play()
    except RunStopped:
        log.info(
            "match %s ended without this attempt while it played; its bots are called no "
            "more and nothing is recorded",
            match_id,
        )
        return RunResult.MATCH_ENDED
    except Exception as exc:  # a platform failure: never blamed on a bot
        log.exception("match %s failed on the platform side", match_id)
        close_old_connections()
        return _given_back(match_fail_attempt(match_id=match_id, token=token, error=repr(exc)))
    played = PlayedMatch.from_outcome(match_id, outcome)
    return _record_with_retries(match_id=match_id, token=token, played=played)


def _record_with_retries(*, match_id: int, token: str, played: PlayedMatch) -> RunResult:
    """Record a played match, trying again on a fresh connection after a transient error.

    The write is first-writer-wins, so a try after one that did commit changes nothing. When
    every try fails the outcome goes to the ``record_outcome`` task, which tries again until
    the database is back; only an outcome the database refuses even without its samples (a
    platform fault) gives the match back to be played again.
    """
    tries = settings.MATCH_RECORD_TRIES
    for attempt in range(1, tries + 1):
        try:
            recorded = match_record_outcome(match_id=match_id, token=token, played=played)
            return RunResult.RECORDED if recorded else RunResult.MATCH_ENDED
        except (OperationalError, InterfaceError) as exc:
            log.warning(
                "recording match %s failed (try %s of %s): %s", match_id, attempt, tries, exc
            )
            connection.close()
            if attempt < tries:
                time.sleep(settings.MATCH_RECORD_BACKOFF_SECONDS * 2 ** (attempt - 1))
        except (DatabaseError, UnicodeError) as exc:
            log.exception("match %s: the database refused its outcome", match_id)
            connection.close()
            return _given_back(match_fail_attempt(match_id=match_id, token=token, error=repr(exc)))
    log.error("match %s: the database is away; its outcome goes to record_outcome", match_id)
    # Sent at once: there is no transaction to wait for, and the database is away.
    dispatch.send_now(Task.RECORD_OUTCOME, match_id, token, played.to_message())
    return RunResult.HANDED_OFF
