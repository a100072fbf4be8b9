"""Hypothesis strategies shared by the format tests: entry lists and table sizes."""

from __future__ import annotations

from hypothesis import strategies as st

table_sizes = st.integers(min_value=3, max_value=8)


@st.composite
def entries(draw: st.DrawFn, max_bots: int = 40) -> tuple[list[int], int]:
    """Draw a table size and at least that many distinct opaque bot ids."""
    table_size = draw(table_sizes)
    count = draw(st.integers(min_value=table_size, max_value=max_bots))
    bots = draw(st.lists(st.integers(1, 10**6), min_size=count, max_size=count, unique=True))
    return bots, table_size
