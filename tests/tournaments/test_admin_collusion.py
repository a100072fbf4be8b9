"""The collusion scans in the admin: staff read the flagged pairs, nobody edits them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.support.collusion import Planted, store_season
from tournaments.models import CollusionFlag, CollusionScan
from tournaments.services.collusion import collusion_scan

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged(make_bot, owner, oh_hell, settings):
    settings.COLLUSION_MIN_TABLES = 20
    settings.COLLUSION_FALSE_DISCOVERY_RATE = 0.01
    bots = [make_bot(owner, status="active", name=f"seat-{i}") for i in range(8)]
    store_season(oh_hell, bots, tables=700, seed=4, planted=Planted(beneficiary=5, partner=1))
    assert collusion_scan(variant_id=oh_hell.pk)
    return CollusionFlag.objects.get()


def test_staff_read_the_flagged_pairs_and_the_scan_with_its_evidence(
    client, staff, flagged
) -> None:
    client.force_login(staff)
    flags = client.get(reverse("admin:tournaments_collusionflag_changelist"))
    assert flags.status_code == 200
    page = flags.content.decode()
    assert "seat-5" in page and "seat-1" in page
    assert client.get(reverse("admin:tournaments_collusionflag_changelist"), {"q": "seat-5"})
    scan = CollusionScan.objects.get()
    detail = client.get(reverse("admin:tournaments_collusionscan_change", args=[scan.pk]))
    assert detail.status_code == 200
    assert str(flagged.tables) in detail.content.decode()
    listing = client.get(reverse("admin:tournaments_collusionscan_changelist"))
    assert listing.status_code == 200


def test_the_flags_are_read_only_and_hidden_from_non_staff(client, staff, owner, flagged) -> None:
    client.force_login(staff)
    change = reverse("admin:tournaments_collusionflag_change", args=[flagged.pk])
    delete = reverse("admin:tournaments_collusionflag_delete", args=[flagged.pk])
    assert client.post(change, {}).status_code == 403
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert client.get(reverse("admin:tournaments_collusionflag_add")).status_code == 403
    assert CollusionFlag.objects.count() == 1
    client.force_login(owner)
    response = client.get(reverse("admin:tournaments_collusionflag_changelist"))
    assert response.status_code == 302  # to the admin's sign-in
