"""The "Write a bot" pages: the first steps, the starter bots and the protocol's schemas to
download, and the rules the engine plays."""

from __future__ import annotations

from django.conf import settings
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from tournaments.dashboard import protocol_doc

STARTER_PORT = 8001


@require_safe
def write_bot(request: HttpRequest) -> HttpResponse:
    """How to write a bot: the first steps in order, the starter bot, the checker, the protocol."""
    context = {
        "starter": protocol_doc.starter_bot_source("starter_bot.py"),
        "starter_js": protocol_doc.starter_bot_source("starter_bot.js"),
        "protocol": protocol_doc.protocol_html(),
        "schemas": protocol_doc.schema_names(),
        "loopback_allowed": settings.BOT_ALLOW_LOOPBACK,
        "port": STARTER_PORT,
    }
    return render(request, "dashboard/write_bot.html", context)


@require_safe
def rules(request: HttpRequest) -> HttpResponse:
    """The rules the engine plays, for bot authors."""
    return render(request, "dashboard/rules.html", {"rules": protocol_doc.rules_html()})


def _download(name: str) -> FileResponse:
    starter = protocol_doc.STARTER_BOTS[name]
    return FileResponse(
        starter.path.open("rb"),
        as_attachment=True,
        filename=name,
        content_type=f"{starter.content_type}; charset=utf-8",
    )


@require_safe
def starter_bot(request: HttpRequest) -> FileResponse:
    """Download the Python starter bot."""
    return _download("starter_bot.py")


@require_safe
def starter_bot_js(request: HttpRequest) -> FileResponse:
    """Download the JavaScript starter bot."""
    return _download("starter_bot.js")


@require_safe
def protocol_schema(request: HttpRequest, name: str) -> FileResponse:
    """Download one of the protocol's JSON Schemas."""
    if name not in protocol_doc.schema_names():
        raise Http404(f"No schema {name}.")
    return FileResponse(
        (protocol_doc.SCHEMAS / name).open("rb"), content_type="application/schema+json"
    )
