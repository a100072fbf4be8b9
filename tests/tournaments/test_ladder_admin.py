"""Ladders in the admin: staff switch one on for a variant, pause and resume it."""

from __future__ import annotations

import re

import pytest

from arena.timebank import DEFAULT_TIME_BANK_MS
from tournaments.models import Ladder, LadderStatus, Variant
from tournaments.models.ladders import LADDER_DUPLICATE_HELP
from tournaments.services.ladders import ladder_ensure_default

URL = "/admin/tournaments/ladder/"


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


def test_staff_pause_and_resume_ladders_from_the_list(admin_client, oh_hell) -> None:
    ladder = ladder_ensure_default()
    assert ladder is not None
    assert admin_client.get(URL).status_code == 200
    assert admin_client.get(f"{URL}{ladder.pk}/change/").status_code == 200
    admin_client.post(URL, {"action": "pause_ladders", "_selected_action": [ladder.pk]})
    ladder.refresh_from_db()
    assert ladder.status == LadderStatus.PAUSED
    admin_client.post(URL, {"action": "resume_ladders", "_selected_action": [ladder.pk]})
    ladder.refresh_from_db()
    assert ladder.status == LadderStatus.RUNNING


def test_the_admin_form_says_what_duplicate_exposes_and_leaves_it_off(
    admin_client, presets
) -> None:
    body = admin_client.get(f"{URL}add/").content.decode()
    assert LADDER_DUPLICATE_HELP in body  # the admin shows help text as written
    (checkbox,) = re.findall(r'<input[^>]*name="duplicate"[^>]*>', body)
    assert "checked" not in checkbox


def test_staff_switch_a_ladder_on_and_an_unseatable_table_is_refused(admin_client, presets) -> None:
    blackout = Variant.objects.get(name="blackout")
    form = {
        "variant": blackout.pk,
        "table_size": 8,
        "time_limit_ms": 1000,
        "time_bank_ms": DEFAULT_TIME_BANK_MS,
        "duplicate": "on",
        "round_tables": 8,
    }
    response = admin_client.post(f"{URL}add/", form)
    assert response.status_code == 200  # the form again, with the error
    assert not Ladder.objects.filter(variant=blackout).exists()
    response = admin_client.post(f"{URL}add/", {**form, "table_size": 4, "round_tables": 17})
    assert response.status_code == 200  # refused, the error on the field
    assert set(response.context["adminform"].form.errors) == {"round_tables"}
    response = admin_client.post(f"{URL}add/", {**form, "table_size": 4})
    assert response.status_code == 302
    assert Ladder.objects.get(variant=blackout).status == LadderStatus.RUNNING
