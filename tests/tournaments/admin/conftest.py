"""Staff signed in to the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client


@pytest.fixture
def admin_client(client: Client, staff: User) -> Client:
    client.force_login(staff)
    return client
