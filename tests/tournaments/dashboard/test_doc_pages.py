"""The protocol and rules pages: every link and every file they name resolves on the site."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.http import FileResponse
from django.test import Client

from tournaments.dashboard import protocol_doc

pytestmark = pytest.mark.django_db

PAGES = ["/write-a-bot/", "/write-a-bot/rules/"]
# Inline code that is a file name: ``bid.request.json``, ``examples/starter_bot.py``.
FILE_NAME = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.(?:py|js|md|json|toml|txt|html|yaml|yml|cfg)")


class DocPage(HTMLParser):
    """The ids, links, repository-file marks and inline code names of a rendered page."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.repo_files: list[str] = []
        self.inline_code: list[str] = []
        self._pre = 0
        self._code: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if named.get("id"):
            self.ids.add(named["id"] or "")
        if tag == "a" and named.get("href"):
            self.links.append(named["href"] or "")
        if "repo-file" in (named.get("class") or "").split():
            self.repo_files.append(named.get("title") or "")
        if tag == "pre":
            self._pre += 1
        if tag == "code" and not self._pre:
            self._code = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._pre -= 1
        if tag == "code" and self._code is not None:
            self.inline_code.append("".join(self._code))
            self._code = None

    def handle_data(self, data: str) -> None:
        if self._code is not None:
            self._code.append(data)


def _page(client: Client, path: str) -> DocPage:
    response = client.get(path)
    assert response.status_code == 200, path
    return DocPage(response.content.decode())


def _served_files() -> dict[str, str]:
    """The files the site serves by name, and where."""
    served = {name: f"/write-a-bot/{name}" for name in protocol_doc.STARTER_BOTS}
    served.update({name: f"/write-a-bot/schemas/{name}" for name in protocol_doc.schema_names()})
    return served


@pytest.mark.parametrize("path", PAGES)
def test_every_link_of_the_page_leads_to_a_page_or_an_anchor_that_exists(
    client: Client, path: str
) -> None:
    page = _page(client, path)
    assert len(page.links) > 10
    for href in page.links:
        parts = urlsplit(href)
        if parts.scheme in ("http", "https"):
            continue
        assert not parts.scheme and not parts.netloc, href
        assert "../" not in href and not href.endswith(".md"), href
        target = page if not parts.path else None
        if parts.path:
            assert parts.path.startswith("/"), href
            response = client.get(parts.path, follow=True)
            assert response.status_code == 200, href
            if parts.fragment:
                target = DocPage(response.content.decode())
        if parts.fragment:
            assert target is not None and parts.fragment in target.ids, href


@pytest.mark.parametrize("path", PAGES)
def test_the_page_names_no_file_the_site_does_not_serve(client: Client, path: str) -> None:
    page = _page(client, path)
    served = _served_files()
    assert page.repo_files == []
    for text in page.inline_code:
        if FILE_NAME.fullmatch(text):
            assert text in served, f"{path} names {text}, which the site does not serve"
            assert client.get(served[text]).status_code == 200, text


def test_the_protocol_page_links_the_rules_sections_it_cites(client: Client) -> None:
    links = _page(client, "/write-a-bot/").links

    assert "/write-a-bot/rules/#4-what-a-seat-may-know" in links
    assert "/write-a-bot/rules/#39-time-control" in links
    assert "/write-a-bot/starter_bot.js" in links


def test_the_rules_page_shows_every_section_and_links_back_to_the_protocol(
    client: Client,
) -> None:
    page = _page(client, "/write-a-bot/rules/")

    for anchor in ("1-common-rules", "2-the-presets", "37-scoring", "4-what-a-seat-may-know"):
        assert anchor in page.ids
    assert "/write-a-bot/#faults-fallbacks-and-disqualification" in page.links
    assert "/write-a-bot/rules/" in _page(client, "/write-a-bot/").links


def test_the_js_starter_bot_downloads_as_it_is_in_the_repository(client: Client) -> None:
    response = client.get("/write-a-bot/starter_bot.js")

    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    assert response["Content-Type"].startswith("text/javascript")
    assert isinstance(response, FileResponse)
    assert b"".join(response.streaming_content) == protocol_doc.STARTER_BOT_JS.read_bytes()
