"""Chart data for the vendored uPlot: rating updates shaped as aligned series over time."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

from tournaments.models import RatingHistory
from tournaments.rating_math import conservative


def rating_chart(
    rows: Iterable[RatingHistory],
    key: Callable[[RatingHistory], Hashable],
    labels: dict[Hashable, str],
) -> dict[str, Any]:
    """Conservative ratings per series, aligned on one time axis (unix seconds) as uPlot wants."""
    points: dict[Hashable, dict[int, float]] = {k: {} for k in labels}
    for row in sorted(rows, key=lambda r: r.sequence):
        series = points.get(key(row))
        if series is not None:
            series[int(row.at.timestamp())] = round(conservative(row.mu_after, row.sigma_after), 2)
    times = sorted({t for series in points.values() for t in series})
    return {
        "x": times,
        "series": [
            {"label": labels[k], "values": [points[k].get(t) for t in times]}
            for k in labels
            if points[k]
        ],
    }
