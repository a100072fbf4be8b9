"""A deal superseded by a late outcome of an earlier deal of its match is kept as voided."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tournaments', '0018_voided_deals'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='voideddeal',
            name='voided_reason_valid',
        ),
        migrations.AlterField(
            model_name='voideddeal',
            name='reason',
            field=models.CharField(choices=[('worker_lost', 'worker stopped'), ('platform_error', 'platform error'), ('superseded', 'superseded by an earlier deal')], max_length=32),
        ),
        migrations.AddConstraint(
            model_name='voideddeal',
            constraint=models.CheckConstraint(condition=models.Q(('reason__in', ['worker_lost', 'platform_error', 'superseded'])), name='voided_reason_valid'),
        ),
    ]
