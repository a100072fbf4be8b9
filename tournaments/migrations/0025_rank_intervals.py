"""Each variant's batch fit of its rated history: a rank and a bootstrap interval per bot."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tournaments', '0024_tournament_generation'),
    ]

    operations = [
        migrations.CreateModel(
            name='RankFit',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('matches', models.PositiveIntegerField(help_text="rated matches fitted: the variant's latest")),
                ('digest', models.CharField(max_length=64)),
                ('resamples', models.PositiveIntegerField(help_text='bootstrap refits behind the intervals')),
                ('fitted_at', models.DateTimeField(help_text='when the matches fitted were read')),
                ('variant', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='rank_fit', to='tournaments.variant')),
            ],
        ),
        migrations.CreateModel(
            name='RankInterval',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('rank', models.PositiveIntegerField()),
                ('low', models.PositiveIntegerField(blank=True, null=True)),
                ('high', models.PositiveIntegerField(blank=True, null=True)),
                ('strength', models.FloatField(help_text='Plackett-Luce log-strength, mean 0 over the fit')),
                ('matches', models.PositiveIntegerField(help_text="the bot's matches among those fitted")),
                ('bot', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rank_intervals', to='tournaments.bot')),
                ('fit', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='intervals', to='tournaments.rankfit')),
            ],
            options={
                'ordering': ['fit', 'rank', 'bot'],
                'indexes': [models.Index(fields=['fit', 'rank', 'bot'], name='rank_interval_board_idx')],
                'constraints': [models.UniqueConstraint(fields=('fit', 'bot'), name='rank_interval_unique_bot'), models.CheckConstraint(condition=models.Q(('rank__gte', 1)), name='rank_interval_rank_1_up'), models.CheckConstraint(condition=models.Q(models.Q(('high__isnull', True), ('low__isnull', True)), models.Q(('high__gte', models.F('low')), ('low__gte', 1)), _connector='OR'), name='rank_interval_low_to_high')],
            },
        ),
    ]
