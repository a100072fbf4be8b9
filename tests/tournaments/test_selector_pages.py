"""Pages: a paginator's length and slices, each read by its own call."""

from __future__ import annotations

import pytest
from django.core.paginator import Paginator

from tournaments.selectors.pages import Pages

ROWS = [f"row {i}" for i in range(7)]


def pages(calls: list[str]) -> Pages[str]:
    def count() -> int:
        calls.append("count")
        return len(ROWS)

    def read(start: int, stop: int) -> list[str]:
        calls.append(f"read {start}:{stop}")
        return ROWS[start:stop]

    return Pages(count=count, read=read)


def test_a_paginator_counts_once_and_reads_only_its_page() -> None:
    calls: list[str] = []
    page = Paginator(pages(calls), 3).page(2)
    assert list(page) == ROWS[3:6]
    assert page.paginator.count == 7
    assert calls == ["count", "read 3:6"]


def test_rows_are_read_one_at_a_time_or_by_runs() -> None:
    calls: list[str] = []
    rows = pages(calls)
    assert (rows[0], rows[6], rows[2:4], rows[5:2]) == ("row 0", "row 6", ROWS[2:4], [])
    assert calls == ["read 0:1", "read 6:7", "read 2:4"]
    with pytest.raises(IndexError):
        rows[7]
    with pytest.raises(IndexError):
        rows[-1]


@pytest.mark.parametrize("run", [slice(0, None), slice(0, 4, 2), slice(-2, 3), slice(0, -1)])
def test_only_runs_from_a_start_to_an_end_are_read(run) -> None:
    with pytest.raises(ValueError):
        pages([])[run]
