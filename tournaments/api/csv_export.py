"""CSV downloads of standings and matches: ``?download=csv`` on the endpoints that offer it.

(``?format=`` already filters tournaments by their format, so the download has its own name;
``Accept: text/csv`` works too.)

Each row is flat: a standings row per bot (head-to-head stays in the JSON), a match row per
seat with the match's fields repeated. Errors keep their one shape, as ``code,message``.

Every text cell that a spreadsheet would read as a formula (one starting with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return) is written with a leading ``'``, so a name or message
chosen by a user is shown as text, never run; numbers are written as they are.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

DOWNLOAD_PARAM = "download"
# What a spreadsheet takes for the start of a formula (or of a cell it then reads as one).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _flat(value: Any) -> Any:
    return "" if value is None else value


def safe_cell(value: Any) -> Any:
    """A cell as written: numbers as they are, text (or anything else, as text) with a leading
    ``'`` when a spreadsheet would read it as a formula."""
    if isinstance(value, bool | int | float):
        return value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def standings_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per bot, without the nested head-to-head."""
    return [
        {k: _flat(v) for k, v in line.items() if k != "head_to_head"} for line in data["standings"]
    ]


def match_rows(matches: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per seat of each match, the match's own fields first."""
    rows = []
    for match in matches:
        own = {k: _flat(v) for k, v in match.items() if k != "seats"}
        for seat in match.get("seats", []):
            rows.append({**own, **{f"seat_{k}": _flat(v) for k, v in seat.items()}})
    return rows


def rows_of(data: Any) -> list[dict[str, Any]]:
    """The rows of an answer: standings, a page of matches, a list of matches or an error."""
    if isinstance(data, Mapping) and "error" in data:
        return [{"code": data["error"].get("code"), "message": data["error"].get("message")}]
    if isinstance(data, Mapping) and "standings" in data:
        return standings_rows(data)
    if isinstance(data, Mapping) and "results" in data:
        return match_rows(data["results"])
    if isinstance(data, list):
        return match_rows(data)
    raise TypeError("this answer has no CSV form")


class CSVRenderer(BaseRenderer):
    """Render standings or matches as CSV with a header row."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        rows = rows_of(data) if data is not None else []
        out = io.StringIO()
        if rows:
            # Lines end in CRLF (RFC 4180), so a cell holding a carriage return is quoted too.
            writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\r\n")
            writer.writeheader()
            writer.writerows({k: safe_cell(v) for k, v in row.items()} for row in rows)
        return out.getvalue().encode(self.charset)


# The renderers of an endpoint that offers CSV: the usual ones, then CSV.
# api_settings imports the classes named in the settings; the stubs type them as the names.
WITH_CSV: list[type[BaseRenderer]] = [
    *api_settings.DEFAULT_RENDERER_CLASSES,  # type: ignore[list-item]
    CSVRenderer,
]


class CSVDownloadNegotiation(DefaultContentNegotiation):
    """Answer CSV for ``?download=csv``; otherwise negotiate by the Accept header alone."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        csv_renderers = [r for r in renderers if isinstance(r, CSVRenderer)]
        if csv_renderers and request.query_params.get(DOWNLOAD_PARAM) == CSVRenderer.format:
            return csv_renderers[0], CSVRenderer.media_type
        return super().select_renderer(request, renderers, format_suffix=None)


def as_download(request: Request, response: Response, name: str) -> Response:
    """Name the file when the answer is CSV, so browsers save it as ``name``.csv."""
    if getattr(request, "accepted_renderer", None) and request.accepted_renderer.format == "csv":
        response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    return response


DOWNLOAD_CSV = OpenApiParameter(
    DOWNLOAD_PARAM,
    OpenApiTypes.STR,
    enum=["csv"],
    description="csv: answer CSV with a header row instead of JSON (Accept: text/csv works too)",
)
