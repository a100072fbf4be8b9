"""Keep the deals voided when the platform gives a match back and deals it anew."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tournaments', '0017_ladder_independent_deals'),
    ]

    operations = [
        migrations.CreateModel(
            name='VoidedDeal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('seed', models.BigIntegerField()),
                ('reason', models.CharField(choices=[('worker_lost', 'worker stopped'), ('platform_error', 'platform error')], max_length=32)),
                ('voided_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('match', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='voided_deals', to='tournaments.match')),
            ],
            options={
                'ordering': ['match', 'voided_at', 'pk'],
                'constraints': [models.CheckConstraint(condition=models.Q(('seed__gte', 0)), name='voided_seed_not_negative'), models.CheckConstraint(condition=models.Q(('reason__in', ['worker_lost', 'platform_error'])), name='voided_reason_valid')],
            },
        ),
    ]
