"""A bot that refuses the platform's signature is disabled with a cause of its own; a bot keeps
its latest check, passed or failed, and the signing probes it accepted; a seat records that it
refused every request of its match, which leaves it out of the match's rating.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def latest_checks(apps, schema_editor):
    """Point every bot at its latest completed check, as new checks will."""
    Bot = apps.get_model("tournaments", "Bot")
    BotHealthCheck = apps.get_model("tournaments", "BotHealthCheck")
    latest = BotHealthCheck.objects.filter(bot=OuterRef("pk"), ok__isnull=False).order_by("-at")
    Bot.objects.update(last_check=Subquery(latest.values("pk")[:1]))


class Migration(migrations.Migration):

    dependencies = [
        ('tournaments', '0022_rated_tournaments_and_usernames'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='bot',
            name='bot_disabled_has_cause',
        ),
        migrations.RemoveConstraint(
            model_name='seatfault',
            name='fault_kind_valid',
        ),
        migrations.AddField(
            model_name='bot',
            name='last_check',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='tournaments.bothealthcheck'),
        ),
        migrations.AddField(
            model_name='bot',
            name='security_warnings',
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name='bothealthcheck',
            name='warnings',
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name='matchseat',
            name='refused_every_request',
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name='bot',
            name='disabled_cause',
            field=models.CharField(blank=True, choices=[('', 'not disabled'), ('health', 'failed health checks'), ('refused', "refused the platform's signature"), ('admin', 'disabled by staff')], max_length=16),
        ),
        migrations.AlterField(
            model_name='bothealthcheck',
            name='error_kind',
            field=models.CharField(blank=True, choices=[('timeout', 'timeout'), ('connection_error', 'connection error'), ('http_status', 'http status'), ('refused', 'refused'), ('not_json', 'not json'), ('wrong_shape', 'wrong shape'), ('illegal_action', 'illegal action'), ('oversize', 'oversize'), ('redirect', 'redirect'), ('forbidden_address', 'forbidden address')], max_length=32),
        ),
        migrations.AlterField(
            model_name='seatfault',
            name='kind',
            field=models.CharField(choices=[('timeout', 'timeout'), ('connection_error', 'connection error'), ('http_status', 'http status'), ('refused', 'refused'), ('not_json', 'not json'), ('wrong_shape', 'wrong shape'), ('illegal_action', 'illegal action'), ('oversize', 'oversize'), ('redirect', 'redirect'), ('forbidden_address', 'forbidden address')], max_length=32),
        ),
        migrations.AddConstraint(
            model_name='bot',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('disabled_cause__in', ['health', 'refused', 'admin']), ('status', 'disabled')), models.Q(models.Q(('status', 'disabled'), _negated=True), ('disabled_cause', '')), _connector='OR'), name='bot_disabled_has_cause'),
        ),
        migrations.AddConstraint(
            model_name='seatfault',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['timeout', 'connection_error', 'http_status', 'refused', 'not_json', 'wrong_shape', 'illegal_action', 'oversize', 'redirect', 'forbidden_address'])), name='fault_kind_valid'),
        ),
        migrations.RunPython(latest_checks, migrations.RunPython.noop),
    ]
