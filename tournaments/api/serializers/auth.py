"""Signing up, tokens, the signed-in user and their email address."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from rest_framework import serializers

from tournaments.api.serializers.fields import StrictCharField
from tournaments.models import is_email_confirmed


class SignUpInput(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=128, write_only=True, trim_whitespace=False)
    email = serializers.EmailField(
        required=False,
        allow_blank=True,
        max_length=254,
        help_text="a link to confirm it is mailed; bots play on the ladders once it is confirmed",
    )


class EmailChangeInput(serializers.Serializer):
    email = serializers.EmailField(allow_blank=True, max_length=254)
    password = StrictCharField(max_length=128, write_only=True, trim_whitespace=False)


class EmailConfirmInput(serializers.Serializer):
    key = StrictCharField(max_length=1000, help_text="the key of the mailed link")


class TokenInput(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=128, write_only=True, trim_whitespace=False)


class TokenOutput(serializers.Serializer):
    token = serializers.CharField()
    username = serializers.CharField()


class UserOutput(serializers.ModelSerializer):
    email_confirmed = serializers.SerializerMethodField(
        help_text="whether the address is confirmed: the ladders seat bots of confirmed accounts"
    )

    class Meta:
        model = get_user_model()
        fields = ["id", "username", "email", "email_confirmed"]

    def get_email_confirmed(self, user: User) -> bool:
        return is_email_confirmed(user)
