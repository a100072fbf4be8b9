"""How work reaches the workers: every task is sent from here, by name.

Services decide *that* something must happen; this module knows *how*. A task is sent once the
current transaction commits (``send``), so a worker never looks for a row that is not there
yet, or at once when there is no transaction to wait for (``send_now``). Routing to the match,
ladder, scrimmage and control queues happens on the way (config/celery_app.py routes by name).

With ``CELERY_EAGER=1`` (tests on SQLite, config/settings.py) a task runs inside the process
that sends it, after the commit, as a worker would run it. Ladder top-ups are the exception
there: each finished ladder match asks for one and each top-up plays more matches, so run
in-process they would play without end; an eager deployment has no beat either, and a ladder
is topped up only when asked directly (``ladders_top_up``).

A ladder top-up and a rating write each do, when they run, everything asked of them before
they started (every ladder's tables, every finished match), so while one of them waits in the
broker another adds nothing: ``send`` then joins the one waiting (``COALESCED``, marked in the
shared cache until the task starts: ``task_started``). A busy ladder finishing tens of matches
a second thus costs its control worker one top-up and one rating write at a time, each rating
every match finished meanwhile in one transaction.
"""

from __future__ import annotations

import contextlib
from enum import StrEnum
from typing import cast

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from config.celery_app import app
from tournaments.cache_keys import waiting_task_key

TaskArg = int | str | dict[str, object]


class Task(StrEnum):
    """The tasks of tournaments/tasks.py, by the names workers know them by."""

    RUN_MATCH = "tournaments.run_match"
    RUN_LADDER_MATCH = "tournaments.run_ladder_match"
    RUN_SCRIMMAGE_MATCH = "tournaments.run_scrimmage_match"
    RECORD_OUTCOME = "tournaments.record_outcome"
    TOP_UP_LADDERS = "tournaments.top_up_ladders"
    RATE_FINISHED_MATCHES = "tournaments.rate_finished_matches"
    ADVANCE_TOURNAMENT = "tournaments.advance_tournament"
    GENERATE_TOURNAMENT = "tournaments.generate_tournament"
    RECOMPUTE_RATINGS = "tournaments.recompute_ratings"
    FIT_RANK_INTERVALS = "tournaments.fit_rank_intervals"
    SCAN_COLLUSION = "tournaments.scan_collusion"
    COMPLETE_HEALTH_CHECK = "tournaments.complete_health_check"
    SEND_PASSWORD_RESET = "tournaments.send_password_reset"
    SEND_EMAIL_CONFIRMATION = "tournaments.send_email_confirmation"


# Tasks that, run inside the sending process, would send themselves again without end.
NOT_RUN_IN_PROCESS = frozenset({Task.TOP_UP_LADDERS})


def _sent(task: Task) -> bool:
    """Whether ``task`` goes anywhere: to a worker, or run here when tasks run in-process."""
    return not app.conf.task_always_eager or task not in NOT_RUN_IN_PROCESS


# Tasks of which one waiting run stands for any number of sends (they take no arguments).
COALESCED = frozenset({Task.TOP_UP_LADDERS, Task.RATE_FINISHED_MATCHES})
# How long a waiting run's mark holds: a lost message delays the next send by this at most
# (beat's sweeps top up and rate on their own meanwhile: docs/operations.md, SWEEP_SECONDS).
WAITING_MARK_SECONDS = 30


def send(task: Task, *args: TaskArg) -> None:
    """Send ``task`` with ``args`` once the current transaction commits (at once outside one);
    a coalesced task already waiting to run is not sent again."""
    if _sent(task):
        transaction.on_commit(lambda: _send_unless_waiting(task, *args))


def _send_unless_waiting(task: Task, *args: TaskArg) -> None:
    if task in COALESCED and not args and _one_waiting(task):
        return
    send_now(task, *args)


def _one_waiting(task: Task) -> bool:
    """Whether a run of ``task`` waits to start already; marks one waiting when not.

    Only where the cache is shared by every process (Redis) and tasks go to workers: a mark in
    one process's own memory would never be cleared by the worker.
    """
    if app.conf.task_always_eager or not settings.REDIS_URL:
        return False
    try:
        return not cache.add(
            waiting_task_key(task.value, app.conf.task_default_queue),
            1,
            timeout=WAITING_MARK_SECONDS,
        )
    except Exception:  # any backend's failure: send it, as without the cache
        return False


def task_started(task: Task) -> None:
    """A coalesced task starts, before it reads anything: a send from now on is sent anew."""
    # Any backend's failure is left alone: the mark expires by itself.
    with contextlib.suppress(Exception):
        cache.delete(waiting_task_key(task.value, app.conf.task_default_queue))


def send_now(task: Task, *args: TaskArg) -> None:
    """Send ``task`` now, without asking the database anything (it may be away)."""
    if not app.conf.task_always_eager:
        app.send_task(task.value, args=list(args))
    elif _sent(task):
        if task.value not in app.tasks:
            app.loader.import_default_modules()  # the tasks modules, as a worker loads them
        app.tasks[task.value].apply(args=args)


def queue_of(kind: str) -> str:
    """The broker queue of ``kind`` (config/settings.py's TASK_QUEUE_KINDS) in this deployment."""
    return f"{app.conf.task_default_queue}.{kind}"


def messages_waiting(queue: str) -> int:
    """Messages in the broker's queue, declared as the workers declare it (no-op if it exists)."""
    with app.connection_for_read() as conn:
        # kombu's Queue.queue_declare answers the broker's (name, messages, consumers); its
        # type stubs say a name.
        _, count, _ = cast(
            "tuple[str, int, int]",
            app.amqp.queues[queue](conn.default_channel).queue_declare(),
        )
    return count
