"""One mailbox confirms one account: confirmed addresses get their mailbox key
(tournaments/mailboxes.py), unique in place of the address's lower case.

The keys are computed in batches. Where several accounts had confirmed spellings of one mailbox
(``mbox+a@x`` and ``MBOX+b@x``, say), one keeps its confirmation: an account whose email is
still the confirmed address before one that has moved on, then the earliest confirmed, then the
oldest account. The others' confirmations are dropped: those accounts are unconfirmed, their
bots wait off the ladders, and their owners confirm another mailbox from the account page
(docs/operations.md, "Email confirmation"). Their accounts, bots and ratings are kept.
"""

from django.db import migrations, models
from django.db.models import Case, Count, F, Value, When

from tournaments.mailboxes import mailbox_key

BATCH = 1000


def fill_mailboxes(apps, schema_editor):
    ConfirmedEmail = apps.get_model("tournaments", "ConfirmedEmail")
    last = 0
    while True:
        rows = list(ConfirmedEmail.objects.filter(user_id__gt=last).order_by("user_id")[:BATCH])
        if not rows:
            return
        for row in rows:
            row.mailbox = mailbox_key(row.email)
        ConfirmedEmail.objects.bulk_update(rows, ["mailbox"])
        last = rows[-1].user_id


def keep_one_account_per_mailbox(apps, schema_editor):
    ConfirmedEmail = apps.get_model("tournaments", "ConfirmedEmail")
    shared = (
        ConfirmedEmail.objects.values("mailbox")
        .annotate(n=Count("user_id"))
        .filter(n__gt=1)
        .values_list("mailbox", flat=True)
    )
    for mailbox in list(shared):
        ranked = (
            ConfirmedEmail.objects.filter(mailbox=mailbox)
            .annotate(
                moved_on=Case(When(user__email=F("email"), then=Value(0)), default=Value(1))
            )
            .order_by("moved_on", "confirmed_at", "user__date_joined", "user_id")
            .values_list("user_id", flat=True)
        )
        kept, *dropped = ranked
        ConfirmedEmail.objects.filter(user_id__in=dropped).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0036_ladder_share_owed"),
    ]

    operations = [
        migrations.AddField(
            model_name="confirmedemail",
            name="mailbox",
            field=models.CharField(max_length=254, null=True),
        ),
        migrations.RunPython(fill_mailboxes, migrations.RunPython.noop),
        migrations.RunPython(keep_one_account_per_mailbox, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="confirmedemail",
            name="mailbox",
            field=models.CharField(max_length=254),
        ),
        migrations.RemoveConstraint(
            model_name="confirmedemail",
            name="confirmed_email_one_account",
        ),
        migrations.AddConstraint(
            model_name="confirmedemail",
            constraint=models.UniqueConstraint(
                fields=("mailbox",), name="confirmed_email_one_mailbox"
            ),
        ),
    ]
