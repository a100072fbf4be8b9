"""Shared hosts: listed once each, in one spelling, with who listed them."""

from __future__ import annotations

import pytest

from tournaments.errors import ApplicationError, ConflictError
from tournaments.models import SharedHost
from tournaments.services.hosts import shared_host_add, shared_host_remove


def test_an_address_is_listed_once_in_either_spelling(staff) -> None:
    host = shared_host_add(address="192.0.2.7", note="course", created_by=staff)
    with pytest.raises(ConflictError) as refused:
        shared_host_add(address="::ffff:192.0.2.7", created_by=staff)
    assert refused.value.field == "address"
    assert list(SharedHost.objects.values_list("address", "created_by")) == [
        ("192.0.2.7", staff.pk)
    ]
    shared_host_remove(host=host)
    assert not SharedHost.objects.exists()


def test_a_host_that_is_no_address_is_refused(staff) -> None:
    with pytest.raises(ApplicationError) as refused:
        shared_host_add(address="course-server", created_by=staff)
    assert refused.value.field == "address"
    assert not SharedHost.objects.exists()
