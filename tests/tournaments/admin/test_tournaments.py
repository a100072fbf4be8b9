"""Tournaments in the admin: created with tournament_create, renamed with tournament_update,
moved only by the actions."""

from __future__ import annotations

import pytest

from tests.support.admin_forms import add_form_data, admin_url, change_form_data, form_errors
from tournaments.models import Bot, BotStatus, Tournament, TournamentEntry
from tournaments.services.tournaments import tournament_create


@pytest.fixture
def entrants(make_bot, other_user) -> list[Bot]:
    """Three active bots of another owner, who accepts invitations."""
    return [make_bot(other_user, status=BotStatus.ACTIVE, accept_invitations=True) for _ in "abc"]


def _add(admin_client, oh_hell, bots: list[Bot], **typed):
    typed = {
        "name": "spring cup",
        "variant": oh_hell.pk,
        "format": "round_robin",
        "table_size": 3,
        "bots": ", ".join(str(b.pk) for b in bots),
        **typed,
    }
    data = add_form_data(admin_client, Tournament, **typed)
    return admin_client.post(admin_url(Tournament, "add"), data)


def test_adding_a_tournament_in_the_admin_goes_through_the_service(
    admin_client, staff, oh_hell, entrants
) -> None:
    response = _add(admin_client, oh_hell, entrants)
    assert response.status_code == 302, form_errors(response)
    cup = Tournament.objects.get()
    assert (cup.name, cup.organiser, cup.status, cup.table_size) == (
        "spring cup",
        staff,
        "draft",
        3,
    )
    assert set(cup.entries.values_list("bot_id", flat=True)) == {b.pk for b in entrants}


def test_an_admin_tournament_entering_bots_without_their_owners_consent_is_refused(
    admin_client, oh_hell, entrants
) -> None:
    Bot.objects.filter(pk=entrants[0].pk).update(accept_invitations=False)
    response = _add(admin_client, oh_hell, entrants)
    assert response.status_code == 200
    assert "do not accept invitations" in form_errors(response)["bots"][0]
    assert not Tournament.objects.exists() and not TournamentEntry.objects.exists()


def test_an_admin_tournament_the_variant_cannot_seat_is_refused(
    admin_client, oh_hell, entrants
) -> None:
    response = _add(admin_client, oh_hell, entrants, table_size=9)
    assert response.status_code == 200 and "table_size" in form_errors(response)
    assert not Tournament.objects.exists()


@pytest.fixture
def draft(staff, oh_hell, entrants) -> Tournament:
    return tournament_create(
        organiser=staff,
        name="cup",
        variant=oh_hell,
        format="round_robin",
        bot_ids=[b.pk for b in entrants],
        table_size=3,
    )


def test_a_draft_keeps_its_definition_and_entries_and_only_its_name_changes(
    admin_client, draft, make_bot, owner
) -> None:
    url = admin_url(Tournament, "change", draft.pk)
    page = admin_client.get(url)
    assert set(page.context["adminform"].form.fields) == {"name", "description"}
    inline = page.context["inline_admin_formsets"][0]
    assert not (inline.has_add_permission or inline.has_change_permission)
    assert not inline.has_delete_permission
    data = change_form_data(admin_client, draft, name="renamed", table_size=4, rated="on")
    response = admin_client.post(url, data)
    assert response.status_code == 302, form_errors(response)
    draft.refresh_from_db()
    assert (draft.name, draft.table_size, draft.rated) == ("renamed", 3, False)
    assert draft.entries.count() == 3


def test_a_tournament_is_cancelled_not_deleted_in_the_admin(admin_client, draft) -> None:
    response = admin_client.post(admin_url(Tournament, "delete", draft.pk), {"post": "yes"})
    assert response.status_code == 403
    assert Tournament.objects.filter(pk=draft.pk).exists()


def test_entries_are_not_added_around_the_tournament_in_the_admin(admin_client, draft) -> None:
    assert admin_client.get(admin_url(TournamentEntry, "add")).status_code == 403


def test_a_page_that_comes_back_with_errors_keeps_nothing_the_service_wrote(
    admin_client, oh_hell, entrants
) -> None:
    form = add_form_data(
        admin_client,
        Tournament,
        name="spring cup",
        variant=oh_hell.pk,
        format="round_robin",
        table_size=3,
        bots=", ".join(str(b.pk) for b in entrants),
    )
    # Without the inline's management form the entries formset is invalid, after the
    # tournament's own form has passed (and its service has run).
    form = {name: value for name, value in form.items() if "FORMS" not in name}
    response = admin_client.post(admin_url(Tournament, "add"), form)
    assert response.status_code == 200
    assert not Tournament.objects.exists() and not TournamentEntry.objects.exists()
