"""Owners' scrimmages in the admin, read only."""

from __future__ import annotations

from django.contrib import admin

from tournaments.admin.common import ReadOnlyAdmin, ReadOnlyInline
from tournaments.models import Scrimmage, ScrimmageOpponent


class ScrimmageOpponentInline(ReadOnlyInline):
    model = ScrimmageOpponent
    fields = readonly_fields = ("position", "bot")


@admin.register(Scrimmage)
class ScrimmageAdmin(ReadOnlyAdmin):
    """Owners' unrated practice: staff see every scrimmage, as its owner does."""

    list_display = ["id", "owner", "bot", "variant", "match_count", "seed", "created_at"]
    list_filter = ["variant", "created_at"]
    search_fields = ["=id", "owner__username", "bot__name"]
    list_select_related = ["owner", "bot", "variant"]
    inlines = [ScrimmageOpponentInline]
