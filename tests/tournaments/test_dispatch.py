"""Sending tasks by name: every name is a task the workers know, and what eager mode runs."""

from __future__ import annotations

import pytest
from django.test import override_settings

from config import celery_app
from tournaments import dispatch
from tournaments.dispatch import Task


def test_every_task_the_services_send_is_one_the_workers_have() -> None:
    celery_app.loader.import_default_modules()
    registered = {name for name in celery_app.tasks if name.startswith("tournaments.")}
    assert {task.value for task in Task} <= registered


@pytest.mark.django_db
def test_in_process_a_sent_task_runs_after_the_commit(django_capture_on_commit_callbacks) -> None:
    from tournaments.models import BotHealthCheck

    with override_settings(CELERY_TASK_ALWAYS_EAGER=True):
        with django_capture_on_commit_callbacks() as callbacks:
            dispatch.send(Task.COMPLETE_HEALTH_CHECK, 10**9)
        assert len(callbacks) == 1
        callbacks[0]()  # a check that is gone: the task returns quietly
    assert not BotHealthCheck.objects.exists()


def test_in_process_a_ladder_top_up_is_left_to_beat(django_capture_on_commit_callbacks) -> None:
    with override_settings(CELERY_TASK_ALWAYS_EAGER=True):
        with django_capture_on_commit_callbacks() as callbacks:
            dispatch.send(Task.TOP_UP_LADDERS)
        dispatch.send_now(Task.TOP_UP_LADDERS)  # would raise without a database to top up
    assert callbacks == []
