"""Every tournament and ladder gets a deal salt of its own, which keys its deals apart from every
other competition's (tournaments/seeds.py).

Each existing row is given a fresh random salt; the column is made unique once every row has
one. The matches made before keep the seeds stored on them, whose commitments were published.
"""

import secrets

from django.db import migrations, models

import tournaments.seeds


def give_each_competition_a_salt(apps, schema_editor):
    """A salt per row: a default on the new column would give every existing row the same."""
    for model in ("Tournament", "Ladder"):
        rows = apps.get_model("tournaments", model).objects
        for pk in rows.filter(deal_salt__isnull=True).values_list("pk", flat=True):
            rows.filter(pk=pk).update(deal_salt=secrets.token_hex(16))


class Migration(migrations.Migration):

    dependencies = [
        ('tournaments', '0019_voided_deal_superseded'),
    ]

    operations = [
        migrations.AddField(
            model_name='ladder',
            name='deal_salt',
            field=models.CharField(editable=False, max_length=32, null=True),
        ),
        migrations.AddField(
            model_name='tournament',
            name='deal_salt',
            field=models.CharField(editable=False, max_length=32, null=True),
        ),
        migrations.RunPython(give_each_competition_a_salt, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='ladder',
            name='deal_salt',
            field=models.CharField(default=tournaments.seeds.new_deal_salt, editable=False, max_length=32, unique=True),
        ),
        migrations.AlterField(
            model_name='tournament',
            name='deal_salt',
            field=models.CharField(default=tournaments.seeds.new_deal_salt, editable=False, max_length=32, unique=True),
        ),
    ]
