"""Confirmed email addresses: the ladders seat bots of accounts that confirmed theirs.

No address was ever checked before, so none is taken as confirmed, with one exception: active
staff accounts that have an address (the oldest account of each address, whatever its case),
who are trusted with the admin already. Every other account keeps its bots and their ladder
opt-in; its bots wait off the ladders until the owner confirms the address from the account
page (docs/operations.md, "Email confirmation"). Taking the old addresses as confirmed would
let every account made to crowd the ladders before this change keep its place.
"""

import django.db.models.deletion
import django.db.models.functions.text
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def confirm_staff_addresses(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    ConfirmedEmail = apps.get_model("tournaments", "ConfirmedEmail")
    taken: set[str] = set()
    rows = []
    staff = (
        User.objects.filter(is_staff=True, is_active=True)
        .exclude(email="")
        .order_by("date_joined", "pk")
        .values_list("pk", "email")
    )
    for pk, email in staff:
        if email.lower() not in taken:
            taken.add(email.lower())
            rows.append(ConfirmedEmail(user_id=pk, email=email))
    ConfirmedEmail.objects.bulk_create(rows)


class Migration(migrations.Migration):
    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("tournaments", "0029_seat_tallies"),
    ]

    operations = [
        migrations.CreateModel(
            name="ConfirmedEmail",
            fields=[
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="confirmed_email",
                        serialize=False,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                ("email", models.EmailField(max_length=254)),
                ("confirmed_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        django.db.models.functions.text.Lower("email"),
                        name="confirmed_email_one_account",
                    )
                ],
            },
        ),
        migrations.RunPython(confirm_staff_addresses, migrations.RunPython.noop),
    ]
