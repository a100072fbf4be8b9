"""A JSON parser that never reads more than the request size limit."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from tournaments.api.bodies import PayloadTooLarge


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


class LimitedJSONParser(JSONParser):
    """Parse a JSON body of at most DATA_UPLOAD_MAX_MEMORY_SIZE bytes, even without a length."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
        except RecursionError:
            raise ParseError("The body is nested too deeply.") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"The body is not valid JSON: {exc}") from None
