"""Rows for the schemathesis run (.ci/schemathesis): a user with a token, its bots, tournaments
(one with fixtures); prints the user's token.

Run with the server's environment after ``manage.py migrate`` on a fresh database.
"""

from __future__ import annotations

import os

import django


def seed() -> str:
    """Write the sample rows and return the token of the user who owns them."""
    from django.contrib.auth.models import Group, User
    from rest_framework.authtoken.models import Token

    from tournaments.models import ORGANISERS_GROUP, Bot, BotStatus, ConfirmedEmail, Variant
    from tournaments.services.tournaments import (
        tournament_create,
        tournament_generate,
        tournament_start,
    )

    user = User.objects.create_user(
        "sample-organiser", email="organiser@example.org", password="a-long-sample-passphrase"
    )
    user.groups.add(Group.objects.get_or_create(name=ORGANISERS_GROUP)[0])
    ConfirmedEmail.objects.create(user=user, email=user.email)
    # Made in the database: registering through the API would call each endpoint to verify it.
    bots = [
        Bot.objects.create(
            owner=user,
            name=f"sample-bot-{n}",
            endpoint_url=f"https://bot{n}.example.org/play",
            secret=f"sample-secret-{n}",
            status=BotStatus.ACTIVE,
        )
        for n in range(1, 7)
    ]
    oh_hell = Variant.objects.get(name="oh-hell")
    ids = [bot.pk for bot in bots]
    tournament_create(
        organiser=user, name="sample draft", variant=oh_hell, format="round_robin", bot_ids=ids
    )
    running = tournament_create(
        organiser=user, name="sample running", variant=oh_hell, format="round_robin", bot_ids=ids
    )
    tournament_start(tournament=running)
    tournament_generate(tournament_id=running.pk)
    return Token.objects.create(user=user).key


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    print(seed())
