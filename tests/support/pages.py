"""Rendered pages for the dashboard's tests: a signed-in client and what a page shows."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from django.contrib.auth.models import User
from django.test import Client

GOOD_PASSWORD = "plenty-long-pass-99"


class Page(HTMLParser):
    """The ids, links and field errors of a rendered page."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.errors: dict[str, str] = {}
        self._error_of: str | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if named.get("id"):
            self.ids.add(named["id"] or "")
            match = re.fullmatch(r"id_(\w+)_error", named["id"] or "")
            if match:
                self._error_of = match.group(1)
                self.errors[self._error_of] = ""
        if tag == "a" and named.get("href"):
            self.links.append(named["href"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "ul":
            self._error_of = None

    def handle_data(self, data: str) -> None:
        if self._error_of:
            self.errors[self._error_of] += data


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client
