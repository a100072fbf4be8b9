"""The Celery application: workers and beat run `celery -A config worker` / `beat`."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("ohhell")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


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
