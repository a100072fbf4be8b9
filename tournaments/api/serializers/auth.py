"""Signing up, tokens and the signed-in user."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers

from tournaments.api.serializers.fields import StrictCharField


class SignUpInput(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=128, write_only=True, trim_whitespace=False)
    email = serializers.EmailField(required=False, allow_blank=True, max_length=254)


class TokenInput(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=128, write_only=True, trim_whitespace=False)


class TokenOutput(serializers.Serializer):
    token = serializers.CharField()
    username = serializers.CharField()


class UserOutput(serializers.ModelSerializer):
    class Meta:
        model = get_user_model()
        fields = ["id", "username", "email"]
