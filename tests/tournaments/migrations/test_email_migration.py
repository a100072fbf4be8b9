"""The migration to confirmed email addresses confirms active staff's addresses, and no one
else's: the old addresses were never checked."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tests.support.migrating import historical, migrate, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("tournaments", "0029_seat_tallies")
AFTER = ("tournaments", "0030_email_confirmation")


def test_only_active_staff_addresses_are_confirmed_the_oldest_account_of_each() -> None:
    migrate(BEFORE)
    try:
        admin = User.objects.create_user("admin", email="admin@example.org", is_staff=True)
        twin = User.objects.create_user("admin2", email="ADMIN@example.org", is_staff=True)
        User.objects.create_user("gone", email="gone@example.org", is_staff=True, is_active=False)
        User.objects.create_user("bare", is_staff=True)
        User.objects.create_user("player", email="player@example.org")
        migrate(AFTER)
        confirmed = dict(historical(AFTER, "ConfirmedEmail").objects.values_list("user", "email"))
        assert confirmed == {admin.pk: "admin@example.org"}
        assert twin.pk not in confirmed
    finally:
        migrate_to_latest()
