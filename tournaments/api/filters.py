"""Query-string filters for the list endpoints."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.contrib.auth.models import AnonymousUser
from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_field

from tournaments.models import (
    Bot,
    BotStatus,
    Match,
    MatchStatus,
    Tournament,
    TournamentFormat,
    TournamentStatus,
    Variant,
    sees_bot_privately,
)
from tournaments.selectors.matches import ladder_in_play
from tournaments.selectors.variants import MAX_ID


class ListFilterBackend(DjangoFilterBackend):
    """Filter lists only: on one object's routes the query string names no filter, so
    ``/api/bots/1/?status=disabled`` is bot 1 and ``?format=csv`` is no tournament format."""

    def filter_queryset(self, request: Any, queryset: QuerySet, view: Any) -> QuerySet:
        if getattr(view, "detail", False):
            return queryset
        return super().filter_queryset(request, queryset, view)


# How a yes/no filter is written; anything else is refused rather than read as "any".
BOOLEAN_WORDS = frozenset({"true", "false", "True", "False", "1", "0"})


class FilterSet(django_filters.FilterSet):
    """A filter set that refuses a value it would otherwise ignore: an empty choice, number or
    yes/no, or a yes/no that is neither, so a typo never silently widens a list."""

    def is_valid(self) -> bool:
        valid = super().is_valid()
        for name, filter_ in self.filters.items():
            value = (self.data or {}).get(name)
            if value is None or isinstance(filter_, django_filters.CharFilter):
                continue
            if value == "" or (
                isinstance(filter_, django_filters.BooleanFilter) and value not in BOOLEAN_WORDS
            ):
                self.form.add_error(name, "Give true or false." if value else "Give a value.")
                valid = False
        return valid


class BotFilter(FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    owner = django_filters.CharFilter(field_name="owner__username", lookup_expr="iexact")
    status = django_filters.ChoiceFilter(choices=BotStatus.choices)
    mine = django_filters.BooleanFilter(method="filter_mine", label="only my bots")

    class Meta:
        model = Bot
        fields = ["name", "owner", "status", "mine"]

    def filter_mine(self, queryset, name, value):
        user = self.request.user if self.request else None
        if not value:
            return queryset
        return queryset.filter(owner=user) if user and user.is_authenticated else queryset.none()


class VariantFilter(FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    base = django_filters.CharFilter(lookup_expr="iexact")
    is_preset = django_filters.BooleanFilter()

    class Meta:
        model = Variant
        fields = ["name", "base", "is_preset"]


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_ID})
class IdFilter(django_filters.Filter):
    """A row id: a whole number in the database's range, never a decimal."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


class TournamentFilter(FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    status = django_filters.ChoiceFilter(choices=TournamentStatus.choices)
    format = django_filters.ChoiceFilter(choices=TournamentFormat.choices)
    variant = django_filters.CharFilter(field_name="variant__name", lookup_expr="iexact")
    organiser = django_filters.CharFilter(field_name="organiser__username", lookup_expr="iexact")

    class Meta:
        model = Tournament
        fields = ["name", "status", "format", "variant", "organiser"]


class MatchFilter(FilterSet):
    tournament = IdFilter(field_name="tournament_id")
    variant = django_filters.CharFilter(field_name="variant__name", lookup_expr="iexact")
    status = django_filters.ChoiceFilter(choices=MatchStatus.choices)
    bot = IdFilter(method="filter_bot", label="a bot that sat at the table")
    # As the answer's ``rated``: changed the public ratings (an unrated tournament's never do).
    rated = django_filters.BooleanFilter(
        field_name="rating_sequence", lookup_expr="isnull", exclude=True
    )

    class Meta:
        model = Match
        fields = ["tournament", "variant", "status", "bot", "rated"]

    def filter_bot(self, queryset: QuerySet[Match], name: str, value: int) -> QuerySet[Match]:
        """The bot's matches; its ladder matches in play only to its owner and staff, as their
        seats are shown (tournaments/selectors/matches.py, ``ladder_in_play``)."""
        matches = queryset.filter(seats__bot_id=value)
        owner_id = Bot.objects.filter(pk=value).values_list("owner_id", flat=True).first()
        user = getattr(self.request, "user", AnonymousUser())
        if owner_id is None or not sees_bot_privately(user, owner_id):
            matches = matches.exclude(ladder_in_play())
        return matches
