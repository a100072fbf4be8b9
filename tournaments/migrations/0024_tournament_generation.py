"""Tournament matches can wait unsent: a tournament keeps only a window of its matches in the
broker (TOURNAMENT_MATCHES_IN_FLIGHT), so a cancelled one leaves few messages behind. Existing
matches were all sent, as the default says."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tournaments', '0023_bot_refusal_reasons'),
    ]

    operations = [
        migrations.AddField(
            model_name='match',
            name='unsent',
            field=models.BooleanField(default=False),
        ),
        migrations.AddIndex(
            model_name='match',
            index=models.Index(condition=models.Q(('unsent', True)), fields=['tournament', 'id'], name='match_unsent_idx'),
        ),
    ]
