"""Log lines: one JSON object per event in production, plain lines in development.

Both carry the fields of tournaments/log_context.py in force where the line was written, and
any ``extra=`` fields a call passes; docs/operations.md (Logs) lists them.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from tournaments import log_context


class LogFormat(StrEnum):
    """How log lines are written (the ``LOG_FORMAT`` setting)."""

    JSON = "json"
    PLAIN = "plain"


class ContextFilter(logging.Filter):
    """Copy the log context's fields onto each record (a field a call passed stays)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in log_context.current().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


class JsonLines(JsonFormatter):
    """One JSON object a line: time, level, logger, message, then the context and extras."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(
            "{asctime}{levelname}{name}{message}",
            style="{",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            datefmt="%Y-%m-%dT%H:%M:%S%z",
            **kwargs,
        )


class PlainLines(logging.Formatter):
    """``LEVEL logger: message [field=value ...]`` for a terminal."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = [
            f"{name}={getattr(record, name)}"
            for name in log_context.FIELDS
            if getattr(record, name, None) is not None
        ]
        return f"{line} [{' '.join(fields)}]" if fields else line
