"""Ladders deal every table afresh by default, and existing ladders stop replaying deals.

A duplicate group replays the same deals with the bots rotated through the seats, one rotation
after another. Every card dealt is played, so a bot that remembers what it saw knows the other
seats' cards in the later rotations: on a ladder open to any bot, duplicate rewards memory over
play. ``Ladder.duplicate`` now defaults to off, and every existing ladder has it turned off:
each of them got it only as the former default (nothing told staff what it exposed), so none
chose it knowingly. Staff who trust the code of every opted-in bot may switch it on again
in the admin (the ladder API has no update). Groups already queued play out their remaining rotations; new tables are
single matches with their own deals.
"""

from django.apps.registry import Apps
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor


def independent_deals(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Ladder = apps.get_model("tournaments", "Ladder")
    Ladder.objects.filter(duplicate=True).update(duplicate=False)


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0016_history_page_index"),
    ]

    operations = [
        migrations.AlterField(
            model_name="ladder",
            name="duplicate",
            field=models.BooleanField(
                default=False,
                help_text=(
                    "Off (the default): every table is dealt afresh. On: each table's deals "
                    "are replayed in every seat rotation and rated as one, which cancels the "
                    "luck of the cards; but the bots play the same deals again and can "
                    "remember them across rotations, and every card is played, so a bot that "
                    "recalls what it saw knows the other seats' cards in the later rotations. "
                    "Switch it on only when the code of every opted-in bot is trusted (e.g. "
                    "reviewed course submissions)."
                ),
            ),
        ),
        # Going back leaves the switch off: which ladders had it is not kept.
        migrations.RunPython(independent_deals, migrations.RunPython.noop),
    ]
