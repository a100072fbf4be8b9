"""The bot protocol document and the starter bot, as the "Write a bot" page serves them.

The page renders docs/bot-protocol.md itself, so it says exactly what the document says.
Links in the document point at files of this repository; on the site they lead to the copies
the site serves (the starter bot, the JSON Schemas) or, for other files, name the file.
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

import markdown
from django.conf import settings
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

from arena.schemagen import SCHEMA_DIR as SCHEMAS

PROTOCOL_DOC = Path(settings.BASE_DIR) / "docs" / "bot-protocol.md"
STARTER_BOT = Path(settings.BASE_DIR) / "examples" / "starter_bot.py"
SCHEMA_NAME = re.compile(r"^[a-z]+\.(request|response)\.json$")
# The document's headings start at level 1; on the page they sit below its own heading.
HEADING_BASE_LEVEL = 2

__all__ = [
    "PROTOCOL_DOC",
    "SCHEMAS",
    "STARTER_BOT",
    "protocol_html",
    "schema_names",
    "starter_bot_source",
]


def schema_names() -> list[str]:
    """The protocol's JSON Schema files, by name."""
    return sorted(p.name for p in SCHEMAS.iterdir() if SCHEMA_NAME.match(p.name))


def _repo_path(href: str) -> str:
    """The repository file a link of docs/bot-protocol.md names, e.g. ``arena/signing.py``."""
    parts: list[str] = []
    for part in PurePosixPath("docs", href.partition("#")[0]).parts:
        if part == "..":  # PurePosixPath keeps "..": resolve it here
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _site_link(href: str) -> str | None:
    """Where a repository-relative link of the document leads on the site, or None."""
    file, anchor = _repo_path(href), href.partition("#")[2]
    if file == "examples/starter_bot.py":
        return reverse("dashboard:starter-bot")
    if file == "docs/bot-protocol.md":
        return f"#{anchor}" if anchor else "#protocol"
    if file == "arena/schemas":
        return "#schemas"
    if file.startswith("arena/schemas/") and file.removeprefix("arena/schemas/") in schema_names():
        return reverse("dashboard:protocol-schema", args=[file.removeprefix("arena/schemas/")])
    return None


class _SiteLinks(Treeprocessor):
    """Point links at what the site serves; name the repository file where it serves none."""

    def run(self, root: ET.Element) -> None:
        for parent in root.iter():
            for child in list(parent):
                href = child.get("href") if child.tag == "a" else None
                if not href or href.startswith(("#", "http://", "https://", "mailto:")):
                    continue
                target = _site_link(href)
                if target is not None:
                    child.set("href", target)
                    continue
                # A file the site does not serve: keep the words, say where it lives.
                child.tag = "span"
                child.attrib.clear()
                child.set("class", "repo-file")
                child.set("title", f"in the repository: {_repo_path(href)}")


class _SiteLinksExtension(Extension):
    def extendMarkdown(self, md: markdown.Markdown) -> None:
        md.treeprocessors.register(_SiteLinks(md), "site_links", 0)


@functools.lru_cache(maxsize=2)
def _render(text: str) -> str:
    return markdown.markdown(
        text,
        extensions=["tables", "fenced_code", "toc", _SiteLinksExtension()],
        extension_configs={"toc": {"baselevel": HEADING_BASE_LEVEL}},
        output_format="html",
    )


def protocol_html() -> SafeString:
    """docs/bot-protocol.md as HTML, headings from level 2, links pointing at the site."""
    # The document is this repository's own text, not anything a user or bot sent.
    return mark_safe(_render(PROTOCOL_DOC.read_text(encoding="utf-8")))


def starter_bot_source() -> str:
    """The starter bot's source, to show on the page."""
    return STARTER_BOT.read_text(encoding="utf-8")
