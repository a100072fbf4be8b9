"""The Celery application: workers and beat run `celery -A config worker` / `beat`."""

import inspect
import logging
import logging.config
import os
import time
from typing import Any

from celery import Celery, Task
from celery.signals import (
    beat_init,
    before_task_publish,
    celeryd_init,
    setup_logging,
    task_postrun,
    task_prerun,
    worker_process_shutdown,
    worker_shutdown,
)
from sqlalchemy import create_engine

from tournaments import log_context

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("ohhell")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@celeryd_init.connect
@beat_init.connect
def say_embedded_defaults(**signal: object) -> None:
    """A worker or beat starting says which embedded defaults it runs on."""
    from config.startup import note_embedded_defaults

    note_embedded_defaults()


@setup_logging.connect
def log_as_the_settings_say(loglevel: int | str | None = None, **signal: object) -> None:
    """Workers and beat write the lines of config/logs.py (JSON in production), not Celery's
    own format, at the level their ``--loglevel`` asks for."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    if loglevel:
        logging.getLogger().setLevel(loglevel)


# Fields of one task that the tasks it sends must not inherit.
_TASK_OWN = ("task", "task_id", "lane")
_started: dict[str, tuple[float, log_context.Token]] = {}
log = logging.getLogger("tournaments.tasks")


@before_task_publish.connect
def carry_log_context(headers: dict[str, Any] | None = None, **signal: object) -> None:
    """Send the sender's log context with the task (the request id of ``start/``, say)."""
    if headers is not None:
        context = log_context.current()
        headers["log_context"] = {k: v for k, v in context.items() if k not in _TASK_OWN}


def _task_fields(task: Task, task_id: str, args: Any, kwargs: Any) -> dict[str, Any]:
    """The context of one task: what its sender had, its name, lane, id and *_id arguments."""
    request = task.request
    fields = dict(getattr(request, "log_context", None) or {})
    queue = str((request.delivery_info or {}).get("routing_key") or "")
    _, dot, kind = queue.rpartition(".")
    fields.update(task=task.name, task_id=task_id, lane=kind if dot else "control")
    try:
        bound = inspect.signature(task.run).bind_partial(*(args or ()), **(kwargs or {}))
    except TypeError:
        return fields
    fields.update({k: v for k, v in bound.arguments.items() if k.endswith("_id")})
    return fields


@task_prerun.connect
def enter_task_context(
    task_id: str = "", task: Task | None = None, args: Any = None, kwargs: Any = None, **_: Any
) -> None:
    """Every line a task writes carries its context (tournaments/log_context.py)."""
    if task is not None:
        token = log_context.enter(_task_fields(task, task_id, args, kwargs))
        _started[task_id] = (time.monotonic(), token)


@task_postrun.connect
def leave_task_context(task_id: str = "", state: str | None = None, **_: Any) -> None:
    """Write the task's closing line (its state and time) and leave its context."""
    started = _started.pop(task_id, None)
    if started is None:
        return
    began, token = started
    ms = round((time.monotonic() - began) * 1000)
    log.info("task %s in %d ms", state, ms, extra={"state": state, "duration_ms": ms})
    log_context.leave(token)


@worker_shutdown.connect
@worker_process_shutdown.connect
def finish_matches_in_play(**signal: object) -> None:
    """A worker stopping warmly finishes the matches its process plays, as it finishes its
    running tasks: a match task returns once its match plays (tournaments/services/hosting.py)."""
    from tournaments.services.hosting import match_host_drain

    match_host_drain()


def route_task(
    name: str, args: object, kwargs: object, options: object, **extra: object
) -> dict | None:
    """Send tournament matches and ladder matches to their own queues, named after the
    deployment's queue.

    Read at send time, so a process that changes ``task_default_queue`` (the tests) routes to
    its own queues; control tasks (ladder top-ups among them) take the default queue.
    """
    from django.conf import settings

    kind = settings.TASK_QUEUE_KINDS.get(name)
    if kind is None:
        return None
    return {"queue": f"{app.conf.task_default_queue}.{kind}"}


def prepare_embedded_broker() -> None:
    """On embedded defaults, make the broker's SQLite file ready before the worker, beat and the
    web server use it (migrate does, see tournaments/apps.py): declare the queues once, as
    processes declaring one at the same time could both try to add it; put the file in WAL mode
    (publishers then never wait on the worker's reads, nor it on theirs); and drop each message
    as it is delivered, as the transport itself keeps them for ever.

    The transport takes no message back after delivery (an unacknowledged one is sent again
    from the worker's memory when it stops), so a delivered row is never read again; a match
    whose message a killed worker took is queued again by the sweep (tournaments.sweep_matches).
    """
    url = str(app.conf.broker_url)
    if not url.startswith("sqla+sqlite:"):
        return
    with app.connection_for_write() as conn:
        for queue in app.amqp.queues.values():
            queue(conn.default_channel).declare()
    engine = create_engine(url.removeprefix("sqla+"), **app.conf.broker_transport_options)
    with engine.connect() as db:
        db.exec_driver_sql("PRAGMA journal_mode=WAL")
        db.exec_driver_sql(
            "CREATE TRIGGER IF NOT EXISTS kombu_message_delivered "
            "AFTER UPDATE OF visible ON kombu_message WHEN NOT NEW.visible "
            "BEGIN DELETE FROM kombu_message WHERE id = NEW.id; END"
        )
        db.exec_driver_sql("DELETE FROM kombu_message WHERE NOT visible")
        db.commit()
    engine.dispose()
