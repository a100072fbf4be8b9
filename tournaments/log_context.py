"""What a log line is about: request id, task, lane, match, tournament, bot, as context vars.

Set where the work begins (a web request in tournaments/api/middleware.py, a Celery task in
config/celery_app.py, which also carries the context of the code that sent the task, so a
match's lines from ``start/`` to its rating share the request id); every log line written
inside carries the fields (config/logs.py). Context variables follow threads and asyncio tasks
on their own, so concurrent requests and matches never mix their fields.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

# The fields a context may hold, in the order a plain log line shows them.
FIELDS = (
    "request_id",
    "task",
    "task_id",
    "lane",
    "tournament_id",
    "ladder_id",
    "match_id",
    "bot_id",
    "check_id",
    "recompute_id",
    "user_id",
)

_context: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "log_context", default=MappingProxyType({})
)


def current() -> dict[str, Any]:
    """The fields in force here, in a new dict."""
    return dict(_context.get())


def kept(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The known fields of ``fields`` whose values are plain (others are dropped)."""
    return {
        name: fields[name]
        for name in FIELDS
        if isinstance(fields.get(name), str | int) and not isinstance(fields.get(name), bool)
    }


Token = contextvars.Token[Mapping[str, Any]]


def enter(fields: Mapping[str, Any]) -> Token:
    """Add ``fields`` to the context until ``leave`` gets the token back (a task's signals)."""
    return _context.set(MappingProxyType({**_context.get(), **kept(fields)}))


def leave(token: Token) -> None:
    """Put back the context ``enter`` found."""
    _context.reset(token)


@contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """Add ``fields`` to the context for the lines written inside the block."""
    token = enter(fields)
    try:
        yield
    finally:
        leave(token)
