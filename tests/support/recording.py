"""A task that notes each run of it as a line in a file, for a real worker started with
``-I tests.support.recording``; run as a module, it publishes many of them:
``python -m tests.support.recording FILE PREFIX COUNT KIND PAUSE`` sends COUNT tasks to the
queue of KIND ("matches", "ladder"; "" for control), PAUSE seconds apart, each sending on one
more to the same queue when it runs, as tasks that queue more work do."""

from __future__ import annotations

import sys
import time

from config.celery_app import app

RECORD = "tests.record"


def queue_of(kind: str) -> str:
    """The name of this deployment's queue of ``kind``, as config/celery_app.py routes."""
    name = app.conf.task_default_queue
    return f"{name}.{kind}" if kind else name


@app.task(name=RECORD)
def record(path: str, key: str, queue: str, last: bool, load: str) -> None:
    """Append ``key`` to the file at ``path``, one line per run; unless ``last``, send on a
    task for ``key`` followed by ``>`` to ``queue``."""
    with open(path, "a") as file:
        file.write(f"{key}\n")
    if not last:
        app.send_task(RECORD, args=[path, f"{key}>", queue, True, load], queue=queue)


def expected_keys(prefix: str, count: int) -> set[str]:
    """The keys recorded by the tasks that ``publish`` sends with ``prefix`` and ``count``."""
    return {f"{prefix}-{number}{last}" for number in range(count) for last in ("", ">")}


def publish(path: str, prefix: str, count: int, kind: str, pause: float, size: int) -> None:
    """Send ``count`` record tasks, keys ``prefix-0`` and on, to the queue of ``kind``, each
    carrying ``size`` characters more."""
    queue = queue_of(kind)
    for number in range(count):
        args = [path, f"{prefix}-{number}", queue, False, "x" * size]
        app.send_task(RECORD, args=args, queue=queue)
        time.sleep(pause)


if __name__ == "__main__":
    path, prefix, count, kind, pause, size = sys.argv[1:]
    publish(path, prefix, int(count), kind, float(pause), int(size))
