"""Outputs shaped from columns: each column is one declared field and one key of every row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from rest_framework import serializers

from tournaments.api.serializers.rows import Column, ShapedRows, Shown
from tournaments.models import Rating
from tournaments.provisional import provisional_matches


@dataclass(frozen=True)
class Record:
    bot_id: int
    matches: int
    updated_at: datetime


class RecordOutput(ShapedRows, serializers.ModelSerializer):
    columns = (
        Column("bot", serializers.IntegerField(), attribute="bot_id"),
        Column("matches"),
        Column(
            "provisional", serializers.BooleanField(), attribute="matches", shown=Shown.PROVISIONAL
        ),
        Column("updated_at", shown=Shown.TIME),
    )

    class Meta:
        model = Rating


def test_the_columns_are_the_fields_in_their_order_and_the_model_describes_the_rest() -> None:
    fields = RecordOutput().fields
    assert list(fields) == ["bot", "matches", "provisional", "updated_at"]
    assert isinstance(fields["matches"], serializers.IntegerField)
    assert fields["updated_at"].read_only  # the model's auto_now column


def test_a_row_shows_each_column_read_from_its_attribute_and_shown_its_way() -> None:
    record = Record(
        bot_id=7, matches=provisional_matches(), updated_at=datetime(2024, 1, 2, tzinfo=UTC)
    )
    assert RecordOutput(record).data == {
        "bot": 7,
        "matches": provisional_matches(),
        "provisional": False,
        "updated_at": "2024-01-02T00:00:00Z",
    }


def test_an_attribute_that_is_not_a_name_is_refused_when_the_output_is_declared() -> None:
    with pytest.raises(ValueError, match="'bot id' is not an attribute name"):

        class Broken(ShapedRows, serializers.Serializer):
            columns = (Column("bot", serializers.IntegerField(), attribute="bot id"),)


def test_a_column_without_a_field_needs_a_model_to_describe_it() -> None:
    with pytest.raises(TypeError, match=r"Broken\.matches: a field, or a Meta\.model"):

        class Broken(ShapedRows, serializers.Serializer):
            columns = (Column("matches"),)
