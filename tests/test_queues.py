"""Routing of Celery tasks to the five queues of a deployment."""

from __future__ import annotations

import pytest

from config.celery_app import app, route_task


@pytest.mark.parametrize(
    ("task", "suffix"),
    [
        ("tournaments.run_match", ".matches"),
        ("tournaments.run_ladder_match", ".ladder"),
        ("tournaments.run_scrimmage_match", ".scrimmage"),
        ("tournaments.generate_tournament", ".bulk"),
    ],
)
def test_matches_and_the_making_of_tournaments_have_their_own_queues(task, suffix) -> None:
    route = route_task(task, (), {}, {})
    assert route == {"queue": f"{app.conf.task_default_queue}{suffix}"}


@pytest.mark.parametrize(
    "task",
    [
        "tournaments.advance_tournament",
        "tournaments.rate_finished_matches",
        "tournaments.sweep_matches",
        "tournaments.complete_health_check",
        "tournaments.send_waiting_checks",
        "tournaments.check_bot_health",
        "tournaments.record_outcome",
        "tournaments.top_up_ladders",
    ],
)
def test_control_tasks_take_the_default_queue(task) -> None:
    assert route_task(task, (), {}, {}) is None


def test_a_worker_without_q_consumes_all_five_queues() -> None:
    name = app.conf.task_default_queue
    assert {queue.name for queue in app.conf.task_queues} == {
        name,
        f"{name}.matches",
        f"{name}.ladder",
        f"{name}.scrimmage",
        f"{name}.bulk",
    }


def test_every_routed_task_exists() -> None:
    from django.conf import settings

    app.loader.import_default_modules()
    assert set(settings.TASK_QUEUE_KINDS) <= set(app.tasks)
