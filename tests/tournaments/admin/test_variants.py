"""Variants in the admin: made by variant_create, their rules fixed afterwards."""

from __future__ import annotations

import pytest

from tests.support.admin_forms import admin_url, change_form_data, form_errors
from tournaments.models import Variant


def _add(admin_client, **typed):
    form = {"name": "no-trumps", "base": "oh-hell", "options": "{}", "description": "", **typed}
    return admin_client.post(admin_url(Variant, "add"), form)


def test_adding_a_variant_in_the_admin_goes_through_the_engines_checks(
    admin_client, presets, staff
) -> None:
    response = _add(admin_client, options='{"must_trump": "often"}')
    assert response.status_code == 200
    assert "must_trump" in form_errors(response)["options"][0]
    assert not Variant.objects.filter(name="no-trumps").exists()
    response = _add(admin_client, options='{"must_trump": true}')
    assert response.status_code == 302, form_errors(response)
    variant = Variant.objects.get(name="no-trumps")
    assert (variant.created_by, variant.options["must_trump"]) == (staff, True)


def test_a_variants_rules_are_fixed_and_bad_rating_parameters_are_refused(
    admin_client, oh_hell
) -> None:
    url = admin_url(Variant, "change", oh_hell.pk)
    before = dict(oh_hell.options)
    form = admin_client.get(url).context["adminform"].form
    assert set(form.fields) == {"description", "rating_params"}
    data = change_form_data(admin_client, oh_hell, rating_params='{"sigma": -1}', name="x")
    response = admin_client.post(url, data)
    assert response.status_code == 200
    assert "sigma" in form_errors(response)["rating_params"][0]
    data = change_form_data(admin_client, oh_hell, rating_params='{"beta": 5}', options="{}")
    response = admin_client.post(url, data)
    assert response.status_code == 302, form_errors(response)
    oh_hell.refresh_from_db()
    assert (oh_hell.name, oh_hell.options, oh_hell.rating_params) == (
        "oh-hell",
        before,
        {"beta": 5},
    )


@pytest.mark.usefixtures("presets")
def test_a_variant_is_not_deleted_in_the_admin(admin_client, oh_hell) -> None:
    response = admin_client.post(admin_url(Variant, "delete", oh_hell.pk), {"post": "yes"})
    assert response.status_code == 403
    assert Variant.objects.filter(pk=oh_hell.pk).exists()
