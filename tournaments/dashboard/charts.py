"""Chart data for the vendored uPlot: rating updates shaped as aligned series, as uPlot wants."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from tournaments.maths.ratings import conservative
from tournaments.models import RatingHistory
from tournaments.selectors.analytics import RatingPoint

MU, SIGMA, MINUS = "\N{GREEK SMALL LETTER MU}", "\N{GREEK SMALL LETTER SIGMA}", "\N{MINUS SIGN}"


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


def rating_band_chart(points: Sequence[RatingPoint]) -> dict[str, Any]:
    """One bot's rating by rated match: mu + 3 sigma, the conservative rating (mu - 3 sigma)
    and mu, so the band between the first two shows the uncertainty (charts.js draws ``band``
    charts)."""
    return {
        "band": True,
        "x": [p.match for p in points],
        "series": [
            {
                "label": f"{MU} + 3{SIGMA}",
                "values": [round(p.mu + 3 * p.sigma, 2) for p in points],
            },
            {
                "label": f"rating ({MU} {MINUS} 3{SIGMA})",
                "values": [round(p.conservative, 2) for p in points],
            },
            {"label": MU, "values": [round(p.mu, 2) for p in points]},
        ],
    }
