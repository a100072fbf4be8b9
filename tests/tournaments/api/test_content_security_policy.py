"""Every page carries a Content-Security-Policy, and the pages need nothing it refuses."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.users import PASSWORD

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[3] / "tournaments" / "templates"


def policy(response) -> dict[str, list[str]]:
    """The response's policy, directive by directive."""
    header = response["Content-Security-Policy"]
    directives = [part.split() for part in header.split(";") if part.strip()]
    return {name: sources for name, *sources in directives}


@pytest.mark.parametrize(
    "path", ["/", "/signin/", "/password-reset/", "/write-a-bot/", "/bots/", "/my/account/"]
)
def test_dashboard_pages_allow_scripts_and_styles_from_this_server_only(
    client, owner, path
) -> None:
    client.login(username="owner", password=PASSWORD)
    response = client.get(path)
    assert response.status_code == 200
    rules = policy(response)
    assert rules["script-src"] == ["'self'"] and rules["style-src"] == ["'self'"]
    assert rules["default-src"] == ["'self'"] and rules["object-src"] == ["'none'"]
    assert rules["frame-ancestors"] == ["'none'"] and rules["form-action"] == ["'self'"]


@pytest.mark.parametrize(
    "path",
    ["/api/", "/api/bots/", "/api/auth/me/", "/api/docs/", "/api/docs/?script", "/api/redoc/"],
)
@pytest.mark.parametrize("accept", ["text/html", "application/json"])
def test_api_pages_allow_inline_styles_but_scripts_from_this_server_only(
    client, path, accept
) -> None:
    response = client.get(path, HTTP_ACCEPT=accept)
    assert response.status_code < 500  # a refusal (401, 406) carries the policy too
    rules = policy(response)
    assert rules["script-src"] == ["'self'"]
    assert rules["style-src"] == ["'self'", "'unsafe-inline'"]
    assert rules["default-src"] == ["'self'"]


def test_redoc_may_start_its_search_worker_and_nothing_else_may(client) -> None:
    assert policy(client.get("/api/redoc/"))["worker-src"] == ["'self'", "blob:"]
    assert "worker-src" not in policy(client.get("/api/docs/"))


def test_swagger_ui_starts_from_a_script_file_not_an_inline_script(client) -> None:
    page = Markup(client.get("/api/docs/").content.decode())
    assert page.inline_scripts == []
    assert any("?script" in src for src in page.script_files)
    start_up = client.get(next(src for src in page.script_files if "?script" in src))
    assert start_up.status_code == 200 and "SwaggerUIBundle" in start_up.content.decode()


class Markup(HTMLParser):
    """What a page or template runs or styles inline."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.script_files: list[str] = []
        self.inline_scripts: list[str] = []
        self.style_blocks = 0
        self.inline_attributes: list[str] = []
        self._script: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        self.inline_attributes += [n for n in named if n == "style" or n.startswith("on")]
        if tag == "style":
            self.style_blocks += 1
        if tag == "script" and named.get("src"):
            self.script_files.append(named["src"] or "")
        elif tag == "script" and named.get("type") != "application/json":  # data, never run
            self._script = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            self.inline_scripts.append("".join(self._script))
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script.append(data)


# Templates of pages under /api/, whose policy allows inline styles (never scripts).
API_TEMPLATES = {"api/redoc.html"}


@pytest.mark.parametrize(
    "name", sorted(str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*.html"))
)
def test_no_template_has_an_inline_script_handler_or_style(name) -> None:
    # Each tag or variable stands for some text: a script's src, a value.
    markup = Markup(re.sub(r"{%.*?%}|{{.*?}}", "x", (TEMPLATES / name).read_text()))
    assert markup.inline_scripts == [] and markup.inline_attributes == []
    assert markup.style_blocks == 0 or name in API_TEMPLATES
