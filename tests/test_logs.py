"""Log lines: JSON objects in production, plain lines in development, each with its context."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from django.test import Client

from config.logs import ContextFilter, JsonLines, PlainLines
from tournaments import log_context


@pytest.fixture
def written() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A logger whose lines go through the context filter into a string."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(ContextFilter())
    logger = logging.getLogger("tests.logs")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield logger, out
    logger.removeHandler(handler)


def test_a_json_line_carries_the_context_and_the_extra_fields(
    written: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, out = written
    logger.handlers[-1].setFormatter(JsonLines())
    with log_context.bound(request_id="r1", match_id=7, lane="ladder", ignored=object()):
        logger.info("match %s finished", 7, extra={"duration_ms": 12})
    logger.info("outside")
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["message"] == "match 7 finished"
    assert first["level"] == "INFO" and first["logger"] == "tests.logs"
    assert first["time"][:2] == "20" and "T" in first["time"]
    assert (first["request_id"], first["match_id"], first["lane"]) == ("r1", 7, "ladder")
    assert first["duration_ms"] == 12
    assert "ignored" not in first
    assert "request_id" not in second and "match_id" not in second


def test_a_plain_line_names_its_context_after_the_message(
    written: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, out = written
    logger.handlers[-1].setFormatter(PlainLines())
    with log_context.bound(match_id=3, bot_id=9):
        logger.warning("bot timed out")
    assert out.getvalue().strip() == "WARNING tests.logs: bot timed out [match_id=3 bot_id=9]"


def test_contexts_nest_and_are_put_back() -> None:
    with log_context.bound(request_id="outer"):
        with log_context.bound(match_id=1):
            assert log_context.current() == {"request_id": "outer", "match_id": 1}
        assert log_context.current() == {"request_id": "outer"}
    assert log_context.current() == {}


@pytest.mark.django_db
def test_each_request_gets_an_id_in_its_answer_and_its_log_line() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonLines())
    requests = logging.getLogger("tournaments.requests")
    requests.addHandler(handler)
    try:
        first = Client().get("/api/health/")
        second = Client().get("/api/no-such-page/")
    finally:
        requests.removeHandler(handler)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["request_id"] for line in lines] == [first["X-Request-ID"], second["X-Request-ID"]]
    assert first["X-Request-ID"] != second["X-Request-ID"]
    assert [(line["path"], line["status"]) for line in lines] == [
        ("/api/health/", first.status_code),
        ("/api/no-such-page/", 404),
    ]
    assert all(line["method"] == "GET" and line["duration_ms"] >= 0 for line in lines)
