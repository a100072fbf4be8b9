#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys

# The commands that start a server; they say which embedded defaults are in use.
SERVER_COMMANDS = frozenset({"runserver", "demo"})


def main() -> None:
    """Run a management command."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    if sys.argv[1:2] and sys.argv[1] in SERVER_COMMANDS:
        from config.startup import note_embedded_defaults

        note_embedded_defaults()
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
