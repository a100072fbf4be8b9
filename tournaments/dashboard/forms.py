"""Forms of the bot authors' pages: input shapes only; the rules are the services'."""

from __future__ import annotations

from django import forms

from tournaments.errors import ApplicationError
from tournaments.netpolicy import MAX_URL_LENGTH


class ServiceForm(forms.Form):
    """A form that shows a service's refusal beside the field it names."""

    def add_service_error(self, error: ApplicationError) -> None:
        """Attach the refusal to its field when the form has one, else to the whole form."""
        field = error.field if error.field in self.fields else None
        self.add_error(field, error.message)


class SignUpForm(ServiceForm):
    username = forms.CharField(
        max_length=150,
        help_text="Letters, digits and @ . + - _ only.",
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
    )
    email = forms.EmailField(
        required=False,
        max_length=254,
        help_text="Optional.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    password = forms.CharField(
        max_length=128,
        strip=False,
        help_text="At least 8 characters, not a common or all-digit password.",
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )


class BotRegisterForm(ServiceForm):
    name = forms.CharField(
        max_length=64,
        help_text="Shown on leaderboards. Letters, digits, '-', '_' and '.'.",
        widget=forms.TextInput(attrs={"autocapitalize": "none", "spellcheck": "false"}),
    )
    endpoint_url = forms.CharField(
        label="Endpoint URL",
        max_length=MAX_URL_LENGTH,
        help_text="Where your bot answers, e.g. http://127.0.0.1:8001/ for a bot on this machine.",
        widget=forms.URLInput(
            attrs={"placeholder": "http://127.0.0.1:8001/", "spellcheck": "false"}
        ),
    )
    description = forms.CharField(max_length=500, required=False)


class LadderForm(forms.Form):
    """Opt in with ``enabled`` set; without it, opt out."""

    enabled = forms.BooleanField(required=False)
