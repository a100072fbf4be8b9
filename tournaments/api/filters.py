"""Query-string filters for the list endpoints."""

from __future__ import annotations

import django_filters

from tournaments.models import Bot, BotStatus, Variant


class BotFilter(django_filters.FilterSet):
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


class VariantFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    base = django_filters.CharFilter(lookup_expr="iexact")
    is_preset = django_filters.BooleanFilter()

    class Meta:
        model = Variant
        fields = ["name", "base", "is_preset"]
