"""The Celery application: workers and beat run `celery -A config worker` / `beat`."""

import os

from celery import Celery
from celery.signals import beat_init, celeryd_init
from sqlalchemy import create_engine

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
