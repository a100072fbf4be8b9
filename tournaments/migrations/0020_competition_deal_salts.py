"""Every tournament and ladder gets a deal salt of its own, which keys its deals apart from every
other competition's (tournaments/seeds.py).

Each existing row is given a fresh random salt; the column is made unique once every row has
one. The matches made before keep the seeds stored on them, whose commitments were published.
The rows are filled a thousand at a time, not one statement a row, since the tables stay locked
until the migration ends.
"""

from django.db import migrations, models

import tournaments.seeds

# Rows read and written together; the database may split a batch's UPDATE further (SQLite
# takes fewer parameters a statement).
BATCH = 1000


def give_each_competition_a_salt(apps, schema_editor):
    """A salt per row: a default on the new column would give every existing row the same."""
    for model in ("Tournament", "Ladder"):
        rows = apps.get_model("tournaments", model).objects
        unsalted = rows.filter(deal_salt__isnull=True).only("pk").order_by("pk")
        batch = list(unsalted[:BATCH])
        while batch:
            for row in batch:
                row.deal_salt = tournaments.seeds.new_deal_salt()
            rows.bulk_update(batch, ["deal_salt"], batch_size=BATCH)
            batch = list(unsalted.filter(pk__gt=batch[-1].pk)[:BATCH])


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
