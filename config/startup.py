"""What a server says as it starts: the web server (manage.py runserver and demo, gunicorn through
config/wsgi.py) and Celery's worker and beat (config/celery_app.py)."""

import os
import sys

from django.conf import settings

# Set once the embedded-defaults line has been printed; processes started from this one (the
# development server's reloader, workers) inherit it and stay quiet, and so do later servers
# of ./run, which sets it after its first.
EMBEDDED_NOTED = "OHHELL_EMBEDDED_NOTED"


def note_embedded_defaults() -> None:
    """Say in one line which embedded defaults are in use, unless this process or its parent
    has said it already."""
    embedded: tuple[str, ...] = settings.EMBEDDED_DEFAULTS
    if not embedded or os.environ.get(EMBEDDED_NOTED):
        return
    print(
        f"ohhell: running on embedded defaults ({', '.join(embedded)}); "
        "set DATABASE_URL, REDIS_URL and SECRET_KEY for production.",
        file=sys.stderr,
    )
    os.environ[EMBEDDED_NOTED] = "1"
