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
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import DateTimeField
from rest_framework.settings import api_settings

from engine.seeds import seed_sha256
from tournaments.api.serializers.matches import MatchOutput, SeatOutput
from tournaments.api.serializers.tournaments import StandingOutput
from tournaments.selectors.matches import seed_revealed

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


# The columns of a match row, as the JSON names them: the match's own, then the seat's.
MATCH_COLUMNS = [f for f in MatchOutput.Meta.fields if f != "seats"]
MATCH_ROW_COLUMNS = [*MATCH_COLUMNS, *(f"seat_{f}" for f in SeatOutput.Meta.fields)]
# The columns of a standings row and of an error, so an answer without rows has its header too.
STANDING_COLUMNS = [str(f) for f in StandingOutput().fields if f != "head_to_head"]
ERROR_COLUMNS = ["code", "message"]


def columns_of(data: Any) -> list[str]:
    """The header of an answer's CSV, whether or not it has rows."""
    if isinstance(data, Mapping) and "error" in data:
        return ERROR_COLUMNS
    if isinstance(data, Mapping) and "standings" in data:
        return STANDING_COLUMNS
    return MATCH_ROW_COLUMNS


# Rows a streamed download reads from its cursor at a time.
STREAM_CHUNK = 2000
# Rows written to the stream at a time: few, large chunks, and a bounded memory.
STREAM_ROWS = 500
_INSTANT = DateTimeField()


def _instant(value: datetime | None) -> str | None:
    return None if value is None else _INSTANT.to_representation(value)


def fixture_seat_row(seat: Any) -> dict[str, Any]:
    """A row of tournaments/selectors/matches.py ``tournament_fixture_seats`` as the match
    list's JSON and CSV show it (tournaments/api/serializers/matches.py)."""
    revealed = seed_revealed(
        status=seat.match__status, group_still_playing=seat.group_still_playing
    )
    return {
        "id": seat.match_id,
        "tournament": seat.match__tournament_id,
        "ladder": seat.match__ladder_id,
        "scrimmage": seat.match__scrimmage_id,
        "variant": seat.match__variant__name,
        "round": seat.match__round,
        "duplicate_group": seat.match__duplicate_group,
        "seed": seat.match__seed if revealed else None,
        "seed_sha256": seed_sha256(seat.match__seed),
        "status": seat.match__status,
        "attempts": seat.match__attempts,
        "max_attempts": seat.match__max_attempts,
        "rated": seat.match__rating_sequence is not None,
        "started_at": _instant(seat.match__started_at),
        "finished_at": _instant(seat.match__finished_at),
        "created_at": _instant(seat.match__created_at),
        "has_replay": seat.has_replay,
        "seat_seat": seat.seat,
        "seat_bot": seat.bot_id,
        "seat_bot_name": seat.bot__name,
        "seat_score": seat.score,
        "seat_rank": seat.rank,
        "seat_faults": seat.faults,
        "seat_disqualified": seat.disqualified,
    }


def _writer(out: io.StringIO, fieldnames: list[str]) -> csv.DictWriter[str]:
    # Lines end in CRLF (RFC 4180), so a cell holding a carriage return is quoted too.
    return csv.DictWriter(out, fieldnames=fieldnames, lineterminator="\r\n")


def _write_rows(writer: csv.DictWriter[str], rows: Iterable[Mapping[str, Any]]) -> None:
    writer.writerows({k: safe_cell(_flat(v)) for k, v in row.items()} for row in rows)


def stream_match_rows(seats: Iterable[Any]) -> Iterator[bytes]:
    """The CSV of seat rows (``fixture_seat_row``), a chunk of ``STREAM_ROWS`` rows at a time:
    the header first, alone when there are no rows, as ``CSVRenderer`` writes."""
    out = io.StringIO()
    writer = _writer(out, MATCH_ROW_COLUMNS)
    writer.writeheader()
    batch: list[dict[str, Any]] = []
    for seat in seats:
        batch.append(fixture_seat_row(seat))
        if len(batch) == STREAM_ROWS:
            _write_rows(writer, batch)
            batch.clear()
            yield out.getvalue().encode(CSVRenderer.charset)
            out.seek(0)
            out.truncate()
    _write_rows(writer, batch)
    if out.tell():
        yield out.getvalue().encode(CSVRenderer.charset)


class CSVRenderer(BaseRenderer):
    """Render standings or matches as CSV with a header row, even when there are no rows."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        rows = rows_of(data)
        out = io.StringIO()
        writer = _writer(out, list(rows[0]) if rows else columns_of(data))
        writer.writeheader()
        _write_rows(writer, rows)
        return out.getvalue().encode(self.charset)


# The renderers of an endpoint that offers CSV: the usual ones, then CSV.
WITH_CSV: list[type[BaseRenderer]] = [
    *api_settings.DEFAULT_RENDERER_CLASSES,
    CSVRenderer,
]


class NoFormatOverride:
    """Negotiation settings in which ``?format=`` never picks the response's format."""

    URL_FORMAT_OVERRIDE = None


class CSVDownloadNegotiation(DefaultContentNegotiation):
    """Answer CSV for ``?download=csv`` to a GET; otherwise negotiate by the Accept header alone
    (``?format=`` is a filter of tournaments, so it never asks for CSV)."""

    # DRF reads only URL_FORMAT_OVERRIDE from ``settings``; the stubs type the attribute as
    # the whole settings object.
    settings = NoFormatOverride  # type: ignore[assignment]

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        csv_renderers = [r for r in renderers if isinstance(r, CSVRenderer)]
        asked = request.query_params.get(DOWNLOAD_PARAM)
        if csv_renderers and asked is not None and request.method in ("GET", "HEAD"):
            if asked != CSVRenderer.format:
                raise ValidationError({DOWNLOAD_PARAM: ['The only download is "csv".']})
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
