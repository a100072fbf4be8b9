"""Rated tournaments, and the keys that make lookalike usernames one.

Tournaments that exist are marked rated: their matches changed the public ratings under the
rule before this one, and the ones still to be played count the same, so history and a
recompute are unchanged. New tournaments are unrated unless staff mark them.

Every account gets its username's key (tournaments/usernames.py), oldest first. Two accounts
whose names already look alike are both kept: the older holds the key and the later one's is
NULL, so neither name can be taken again by a third lookalike and no sign-in breaks.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from tournaments.usernames import username_key

CHUNK = 2000


def mark_existing_tournaments_rated(apps, schema_editor):
    apps.get_model("tournaments", "Tournament").objects.update(rated=True)


def fill_username_keys(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    UsernameKey = apps.get_model("tournaments", "UsernameKey")
    held: set[str] = set()
    rows = []
    users = User.objects.order_by("date_joined", "pk").values_list("pk", "username")
    for pk, username in users.iterator(chunk_size=CHUNK):
        key = username_key(username)
        rows.append(UsernameKey(user_id=pk, key=None if key in held else key))
        held.add(key)
    UsernameKey.objects.bulk_create(rows, batch_size=CHUNK)


class Migration(migrations.Migration):
    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("tournaments", "0021_shared_hosts_and_owner_caps"),
    ]

    operations = [
        migrations.CreateModel(
            name="UsernameKey",
            fields=[
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="username_key",
                        serialize=False,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                ("key", models.CharField(max_length=64, null=True, unique=True)),
            ],
        ),
        migrations.RunPython(fill_username_keys, migrations.RunPython.noop),
        migrations.RemoveConstraint(
            model_name="match",
            name="match_rated_is_finished_and_sequenced",
        ),
        migrations.AddConstraint(
            model_name="match",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("rated", False), ("rated_at__isnull", True), ("rating_sequence__isnull", True)
                    ),
                    models.Q(("rated", True), ("rated_at__isnull", False), ("status", "finished")),
                    _connector="OR",
                ),
                name="match_rated_is_finished",
            ),
        ),
        migrations.AddField(
            model_name="tournament",
            name="rated",
            field=models.BooleanField(
                default=False,
                help_text="set by staff only: the matches change the variant's public ratings",
            ),
        ),
        migrations.RunPython(mark_existing_tournaments_rated, migrations.RunPython.noop),
    ]
