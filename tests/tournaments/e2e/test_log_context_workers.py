"""A task's log lines carry the request id of the code that sent it, with its own fields."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from tests.support.workers import ROOT, database_url, needs_postgres_and_redis, wait_for
from tournaments import dispatch, log_context
from tournaments.dispatch import Task

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    needs_postgres_and_redis,
]
MISSING_MATCH = 987_654_321


def _closing_line(log: Path) -> dict[str, Any] | None:
    for text in log.read_text(errors="replace").splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if line.get("match_id") == MISSING_MATCH and str(line.get("message")).startswith("task"):
            return dict(line)
    return None


def test_a_worker_writes_json_lines_with_the_senders_request_id(queue: str, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
        "LOG_FORMAT": "json",
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-n", f"logs-{queue}@%h"]
    command += ["-c", "1", "--pool", "threads", "--loglevel", "INFO"]
    command += ["--without-gossip", "--without-mingle"]
    with log.open("wb") as out:
        worker = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        with log_context.bound(request_id="req-logs-1", lane="web"):
            dispatch.send_now(Task.RUN_MATCH, MISSING_MATCH)
        wait_for(lambda: _closing_line(log) is not None, 120, "the task's closing line")
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    line = _closing_line(log)
    assert line is not None
    assert line["request_id"] == "req-logs-1"
    assert line["task"] == Task.RUN_MATCH.value and line["lane"] == "matches"
    assert line["state"] == "SUCCESS" and line["level"] == "INFO"
    assert isinstance(line["duration_ms"], int)
