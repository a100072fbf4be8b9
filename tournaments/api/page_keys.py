"""Which anonymous reads may keep their page in the shared cache: only requests written in one
canonical form, so a client cannot make a cache entry per distinct query string.

A page asked for at a free-form instant (``?at=``), in another spelling of the same value
(``page=01``, a variant's name in capitals), or with a media type carrying parameters would be
kept once and never served again; a loop of such reads would fill the cache. Each cached
parameter therefore names one canonical form, and any other request is answered from the
database, uncached. What may be kept is then bounded by the data (bots, variants, pages), not
by what clients write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping

from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

from tournaments.api.pagination import PageNumberPagination
from tournaments.selectors.variants import MAX_ID

# Tells whether a parameter's value is in its canonical form.
CanonicalForm = Callable[[str], bool]
# The one media type a cached page is kept in: a parameter (``; indent=4``) is another page.
CACHED_MEDIA_TYPE = "application/json"
# The longest variant name a cached request may carry (longer ones are not cached).
MAX_NAME = 64


def is_decimal(value: str, maximum: int = MAX_ID) -> bool:
    """A whole number from 1 to ``maximum`` as ``str(int)`` writes it (no sign, no zero first)."""
    if not (value.isascii() and value.isdecimal()) or len(value) > len(str(maximum)):
        return False
    return value == str(int(value)) and 1 <= int(value) <= maximum


def is_variant_ref(value: str) -> bool:
    """A variant's id (``is_decimal``), or a name in lower case: names are compared without
    case, so each has one canonical spelling."""
    if value.isdecimal():
        return is_decimal(value)
    return 0 < len(value) <= MAX_NAME and value == value.lower()


def is_page_size(value: str) -> bool:
    """A page size the paginator takes as it is (one it would clamp is another spelling)."""
    return is_decimal(value, PageNumberPagination.max_page_size)


def is_flag(value: str) -> bool:
    """A boolean written as the API writes it."""
    return value in ("true", "false")


def page_key(
    request: Request, *, kind: str, scope: tuple[object, ...], forms: Mapping[str, CanonicalForm]
) -> str | None:
    """The cache key of the page a request asks for, or None when it must not be kept: a
    parameter outside ``forms``, given twice, or not in its canonical form, or an answer in
    anything but plain JSON. ``scope`` is what else the page depends on (a bot's id, say)."""
    params = request.query_params
    if not isinstance(request.accepted_renderer, JSONRenderer):
        return None
    if request.accepted_media_type != CACHED_MEDIA_TYPE:
        return None
    for name, values in params.lists():
        form = forms.get(name)
        if form is None or len(values) != 1 or not form(values[0]):
            return None
    parts = (*scope, request.get_host(), request.is_secure(), sorted(params.items()))
    return f"ohhell:{kind}:" + hashlib.sha256(repr(parts).encode()).hexdigest()
