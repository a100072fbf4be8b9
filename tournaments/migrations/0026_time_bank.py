"""Each seat's time bank: a setting of ladders and tournaments, copied into every match.

Matches made before have no bank (0), and so have tournaments made before, whose later rounds
then play as their first ones did; ladders take the default bank for their next tables.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("tournaments", "0025_rank_intervals"),
    ]

    operations = [
        migrations.AddField(
            model_name='ladder',
            name='time_bank_ms',
            field=models.PositiveIntegerField(default=10000),
        ),
        migrations.AddField(
            model_name='match',
            name='time_bank_ms',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='tournament',
            name='time_bank_ms',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AlterField(
            model_name='tournament',
            name='time_bank_ms',
            field=models.PositiveIntegerField(default=10000),
        ),
        migrations.AddConstraint(
            model_name='ladder',
            constraint=models.CheckConstraint(condition=models.Q(('time_bank_ms__lte', 120000)), name='ladder_time_bank_range'),
        ),
        migrations.AddConstraint(
            model_name='match',
            constraint=models.CheckConstraint(condition=models.Q(('time_bank_ms__lte', 120000)), name='match_time_bank_range'),
        ),
        migrations.AddConstraint(
            model_name='tournament',
            constraint=models.CheckConstraint(condition=models.Q(('time_bank_ms__lte', 120000)), name='tournament_time_bank_range'),
        ),
    ]
