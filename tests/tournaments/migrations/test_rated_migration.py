"""The migration to rated tournaments and username keys keeps what existed working."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tests.support.migrating import historical, migrate, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("tournaments", "0020_competition_deal_salts")
AFTER = ("tournaments", "0022_rated_tournaments_and_usernames")


def test_existing_tournaments_stay_rated_and_lookalike_accounts_are_both_kept(presets) -> None:
    migrate(BEFORE)
    try:
        alice = User.objects.create_user(username="alice")
        twin = User.objects.create_user(username="\u0430lice")  # Cyrillic a, joined later
        bob = User.objects.create_user(username="bob")
        old_tournament = historical(BEFORE, "Tournament")
        old_variant = historical(BEFORE, "Variant")
        old_tournament.objects.create(
            name="old cup",
            organiser_id=alice.pk,
            variant_id=old_variant.objects.get(name="oh-hell").pk,
            format="round_robin",
        )
        migrate(AFTER)
        new_tournament = historical(AFTER, "Tournament")
        assert list(new_tournament.objects.values_list("rated", flat=True)) == [True]
        keys = dict(historical(AFTER, "UsernameKey").objects.values_list("user_id", "key"))
        assert keys[alice.pk] and keys[bob.pk] and keys[alice.pk] != keys[bob.pk]
        assert keys[twin.pk] is None
        assert User.objects.filter(pk__in=[alice.pk, twin.pk, bob.pk]).count() == 3
    finally:
        migrate_to_latest()
