"""The one error body (tournaments/api/bodies.py), as the schema documents it."""

from __future__ import annotations

from rest_framework import serializers


class ErrorDetailOutput(serializers.Serializer):
    code = serializers.CharField(help_text="what went wrong, for programs: invalid, not_found ...")
    message = serializers.CharField(help_text="what went wrong, for people; names the field")
    detail = serializers.DictField(help_text="each field's messages, when a body was invalid")
    retry_after = serializers.IntegerField(
        required=False, min_value=1, help_text="429 only: whole seconds to wait (Retry-After)"
    )


class ErrorOutput(serializers.Serializer):
    error = ErrorDetailOutput()
