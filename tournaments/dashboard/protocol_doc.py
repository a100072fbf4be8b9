"""The bot authors' documents and starter bots, as "Write a bot" and the rules page serve them.

The pages render docs/bot-protocol.md and docs/rules.md themselves, so they say exactly what
the documents say. Links in the documents point at files of this repository; on the site they
lead to the copies the site serves (the other document, the starter bots, the JSON Schemas).
A link to any other file is a mistake the tests catch; the page keeps its words and names the
file rather than link to nothing.

docker/Dockerfile copies docs/ and examples/ beside the packages, so these paths hold in the
image as in a clone.
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import markdown
from django.conf import settings
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

from arena.schemagen import SCHEMA_DIR as SCHEMAS

DOCS = Path(settings.BASE_DIR) / "docs"
EXAMPLES = Path(settings.BASE_DIR) / "examples"
PROTOCOL_DOC = DOCS / "bot-protocol.md"
RULES_DOC = DOCS / "rules.md"
STARTER_BOT = EXAMPLES / "starter_bot.py"
STARTER_BOT_JS = EXAMPLES / "starter_bot.js"
SCHEMA_NAME = re.compile(r"^[a-z]+\.(request|response)\.json$")
# The documents' headings start at level 1; on the page they sit below its own heading.
HEADING_BASE_LEVEL = 2


@dataclass(frozen=True, slots=True)
class StarterBot:
    """A starter bot the site serves for download: its file, its URL name, its media type."""

    path: Path
    url_name: str
    content_type: str


STARTER_BOTS: dict[str, StarterBot] = {
    "starter_bot.py": StarterBot(STARTER_BOT, "dashboard:starter-bot", "text/x-python"),
    "starter_bot.js": StarterBot(STARTER_BOT_JS, "dashboard:starter-bot-js", "text/javascript"),
}
# The page that renders each document, and the id of the document's element on it.
_PAGES = {
    "docs/bot-protocol.md": ("dashboard:write-bot", "protocol"),
    "docs/rules.md": ("dashboard:rules", "rules"),
}

__all__ = [
    "PROTOCOL_DOC",
    "RULES_DOC",
    "SCHEMAS",
    "STARTER_BOT",
    "STARTER_BOTS",
    "STARTER_BOT_JS",
    "StarterBot",
    "protocol_html",
    "rules_html",
    "schema_names",
    "starter_bot_source",
]


def schema_names() -> list[str]:
    """The protocol's JSON Schema files, by name."""
    return sorted(p.name for p in SCHEMAS.iterdir() if SCHEMA_NAME.match(p.name))


def _repo_path(href: str) -> str:
    """The repository file a link of a document in docs/ names, e.g. ``examples/starter_bot.py``."""
    parts: list[str] = []
    for part in PurePosixPath("docs", href.partition("#")[0]).parts:
        if part == "..":  # PurePosixPath keeps "..": resolve it here
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _site_link(href: str, page: str) -> str | None:
    """Where a repository-relative link of the document ``page`` leads on the site, or None."""
    file, anchor = _repo_path(href), href.partition("#")[2]
    fragment = f"#{anchor}" if anchor else ""
    if file in _PAGES:
        url_name, element = _PAGES[file]
        return (reverse(url_name) if file != page else "") + (fragment or f"#{element}")
    if file.startswith("examples/") and file.removeprefix("examples/") in STARTER_BOTS:
        return reverse(STARTER_BOTS[file.removeprefix("examples/")].url_name)
    if file == "arena/schemas":
        return reverse("dashboard:write-bot") + "#schemas"
    if file.startswith("arena/schemas/") and file.removeprefix("arena/schemas/") in schema_names():
        return reverse("dashboard:protocol-schema", args=[file.removeprefix("arena/schemas/")])
    return None


class _SiteLinks(Treeprocessor):
    """Point links at what the site serves; name the repository file where it serves none."""

    def __init__(self, md: markdown.Markdown, page: str) -> None:
        super().__init__(md)
        self.page = page

    def run(self, root: ET.Element) -> None:
        for parent in root.iter():
            for child in list(parent):
                href = child.get("href") if child.tag == "a" else None
                if not href or href.startswith(("#", "http://", "https://", "mailto:")):
                    continue
                target = _site_link(href, self.page)
                if target is not None:
                    child.set("href", target)
                    continue
                child.tag = "span"
                child.attrib.clear()
                child.set("class", "repo-file")
                child.set("title", f"in the repository: {_repo_path(href)}")


class _SiteLinksExtension(Extension):
    def __init__(self, page: str) -> None:
        super().__init__()
        self.page = page

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        md.treeprocessors.register(_SiteLinks(md, self.page), "site_links", 0)


@functools.lru_cache(maxsize=4)
def _render(text: str, page: str) -> str:
    return markdown.markdown(
        text,
        extensions=["tables", "fenced_code", "toc", _SiteLinksExtension(page)],
        extension_configs={"toc": {"baselevel": HEADING_BASE_LEVEL}},
        output_format="html",
    )


def protocol_html() -> SafeString:
    """docs/bot-protocol.md as HTML, headings from level 2, links pointing at the site."""
    # The documents are this repository's own text, not anything a user or bot sent.
    return mark_safe(_render(PROTOCOL_DOC.read_text(encoding="utf-8"), "docs/bot-protocol.md"))


def rules_html() -> SafeString:
    """docs/rules.md as HTML, headings from level 2, links pointing at the site."""
    return mark_safe(_render(RULES_DOC.read_text(encoding="utf-8"), "docs/rules.md"))


def starter_bot_source(name: str = "starter_bot.py") -> str:
    """A starter bot's source, to show on the page."""
    return STARTER_BOTS[name].path.read_text(encoding="utf-8")
