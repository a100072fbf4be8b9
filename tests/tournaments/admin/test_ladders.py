"""Ladders in the admin: switched on with ladder_create and changed with ladder_update."""

from __future__ import annotations

import pytest

from arena.timebank import DEFAULT_TIME_BANK_MS
from tests.support.admin_forms import admin_url, change_form_data, form_errors
from tournaments import dispatch
from tournaments.dispatch import Task
from tournaments.models import Ladder, Variant
from tournaments.services.ladders import ladder_ensure_default


@pytest.fixture
def sent(monkeypatch) -> list[Task]:
    """The tasks the services send, recorded instead of sent."""
    tasks: list[Task] = []
    monkeypatch.setattr(dispatch, "send", lambda task, *args: tasks.append(task))
    return tasks


@pytest.fixture
def ladder(oh_hell) -> Ladder:
    """The oh-hell preset's ladder, which runs by default."""
    ladder = ladder_ensure_default()
    assert ladder is not None
    return ladder


def test_adding_a_ladder_in_the_admin_switches_it_on_through_the_service(
    admin_client, presets, sent
) -> None:
    blackout = Variant.objects.get(name="blackout")
    form = {
        "variant": blackout.pk,
        "table_size": 4,
        "time_limit_ms": 700,
        "time_bank_ms": DEFAULT_TIME_BANK_MS,
        "round_tables": 4,
    }
    response = admin_client.post(admin_url(Ladder, "add"), form)
    assert response.status_code == 302, form_errors(response)
    ladder = Ladder.objects.get(variant=blackout)
    assert (ladder.table_size, ladder.time_limit_ms, ladder.duplicate) == (4, 700, False)
    assert sent == [Task.TOP_UP_LADDERS]  # its first tables are seated at once


def test_a_ladders_change_goes_through_the_service_and_starts_a_new_round(
    admin_client, ladder, sent
) -> None:
    Ladder.objects.filter(pk=ladder.pk).update(current_round="round-before")
    sent.clear()
    data = change_form_data(admin_client, ladder, round_tables=2, time_limit_ms=900)
    response = admin_client.post(admin_url(Ladder, "change", ladder.pk), data)
    assert response.status_code == 302, form_errors(response)
    ladder.refresh_from_db()
    assert (ladder.round_tables, ladder.time_limit_ms, ladder.current_round) == (2, 900, "")
    assert sent == [Task.TOP_UP_LADDERS]


def test_a_ladder_keeps_its_variant_and_refuses_a_table_it_cannot_seat(
    admin_client, ladder, oh_hell
) -> None:
    other = Variant.objects.get(name="blackout")
    url = admin_url(Ladder, "change", ladder.pk)
    response = admin_client.post(url, change_form_data(admin_client, ladder, variant=other.pk))
    assert response.status_code == 302, form_errors(response)
    assert Ladder.objects.get(pk=ladder.pk).variant == oh_hell
    response = admin_client.post(url, change_form_data(admin_client, ladder, table_size=9))
    assert response.status_code == 200 and "table_size" in form_errors(response)
    assert Ladder.objects.get(pk=ladder.pk).table_size == 4


def test_a_ladder_is_paused_not_deleted_in_the_admin(admin_client, ladder) -> None:
    response = admin_client.post(admin_url(Ladder, "delete", ladder.pk), {"post": "yes"})
    assert response.status_code == 403
    assert Ladder.objects.filter(pk=ladder.pk).exists()
