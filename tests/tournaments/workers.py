"""Support for tests with real Celery worker processes: the test database's URL and waiting."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.db import connection


def database_url() -> str:
    """The URL of the test database, for processes started by a test."""
    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{connection.settings_dict['NAME']}"


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")
