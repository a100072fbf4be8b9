"""The migration to one account per mailbox keys every confirmed address by its mailbox and,
where several accounts had confirmed spellings of one mailbox, keeps one confirmation: an
account still at the confirmed address first, then the earliest confirmed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tests.support.migrating import historical, migrate, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("tournaments", "0036_ladder_share_owed")
AFTER = ("tournaments", "0037_confirmed_mailboxes")


def test_each_mailbox_keeps_one_confirmation_the_current_and_earliest_first() -> None:
    migrate(BEFORE)
    try:
        confirmed = historical(BEFORE, "ConfirmedEmail")
        now = timezone.now()
        rows = {
            # (username, email now, email confirmed, confirmed how long ago)
            "first": ("mbox+a@example.org", "mbox+a@example.org", 3),
            "moved": ("elsewhere@example.org", "MBOX@example.org", 9),
            "later": ("mbox+b@example.org", "mbox+b@example.org", 1),
            "dots": ("m.box@googlemail.com", "m.box@googlemail.com", 2),
            "plain": ("mbox@gmail.com", "mbox@gmail.com", 5),
            "alone": ("alone@example.org", "alone@example.org", 1),
        }
        users = {}
        for name, (email, confirmed_email, days) in rows.items():
            users[name] = User.objects.create_user(name, email=email)
            confirmed.objects.create(
                user_id=users[name].pk,
                email=confirmed_email,
                confirmed_at=now - timedelta(days=days),
            )
        migrate(AFTER)
        after = historical(AFTER, "ConfirmedEmail").objects.values_list("user", "mailbox")
        assert dict(after) == {
            users["first"].pk: "mbox@example.org",
            users["plain"].pk: "mbox@gmail.com",
            users["alone"].pk: "alone@example.org",
        }
    finally:
        migrate_to_latest()
