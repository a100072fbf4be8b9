"""Rows a paginator reads a page at a time, without building a model instance per row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar, overload

Row = TypeVar("Row")


class Pages(Sequence[Row]):
    """A list's length and its slices, each read on demand by its own query.

    Django's paginator (behind tournaments/api/pagination.py) takes the length once, then one
    slice: a page costs a count and a read of that page's rows.
    """

    def __init__(self, count: Callable[[], int], read: Callable[[int, int], list[Row]]) -> None:
        """``count()`` is the length; ``read(start, stop)`` the rows from ``start`` to ``stop``."""
        self._count = count
        self._read = read

    def __len__(self) -> int:
        return self._count()

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        if isinstance(index, int):
            rows = self._read(index, index + 1) if index >= 0 else []
            if not rows:
                raise IndexError(index)
            return rows[0]
        start, stop = index.start or 0, index.stop
        if index.step not in (None, 1) or stop is None or start < 0 or stop < 0:
            raise ValueError("rows are read in runs from a start to an end, counted from 0")
        return self._read(start, stop) if stop > start else []
