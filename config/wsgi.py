"""WSGI entry point, served by gunicorn: `gunicorn config.wsgi`."""

import io
import os
from collections.abc import Callable, Iterable
from typing import Any

from django.core.wsgi import get_wsgi_application

from config.startup import note_embedded_defaults

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class ChunkedBodies:
    """Hand Django a chunked request body with its length.

    Django reads only as many bytes as Content-Length declares, so a body sent with
    ``Transfer-Encoding: chunked`` and no length would look empty. A server that has decoded
    the chunks and ends the input with the body says so with ``wsgi.input_terminated`` (gunicorn
    does); then at most one byte more than DATA_UPLOAD_MAX_MEMORY_SIZE is read and passed on with
    its length, so a body over the limit gets the same 413 as a declared one
    (tournaments/api/middleware.py).
    """

    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not environ.get("CONTENT_LENGTH") and environ.get("wsgi.input_terminated"):
            from django.conf import settings

            body = environ["wsgi.input"].read(settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)


application = ChunkedBodies(get_wsgi_application())
note_embedded_defaults()
