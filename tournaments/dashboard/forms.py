"""Forms of the bot authors' pages: input shapes only; the rules are the services'."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.models import User

from arena.timebank import DEFAULT_TIME_BANK_MS, MAX_TIME_BANK_MS
from tournaments.errors import ApplicationError
from tournaments.netpolicy import MAX_URL_LENGTH
from tournaments.services.users import user_set_password

PASSWORD_HELP = "At least 8 characters, not a common or all-digit password."
EMAIL_HELP = (
    "We mail you a link to confirm it: your bots play on the ladders once it is confirmed, "
    "and a forgotten password is reset through it."
)


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
        help_text=EMAIL_HELP,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    password = forms.CharField(
        max_length=128,
        strip=False,
        help_text=PASSWORD_HELP,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )


def _password_field(label: str, autocomplete: str, help_text: str = "") -> forms.CharField:
    return forms.CharField(
        label=label,
        max_length=128,
        strip=False,
        help_text=help_text,
        widget=forms.PasswordInput(attrs={"autocomplete": autocomplete}),
    )


class PasswordChangeForm(ServiceForm):
    old_password = _password_field("Current password", "current-password")
    new_password = _password_field("New password", "new-password", PASSWORD_HELP)
    new_password_again = _password_field("New password again", "new-password")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("new_password") != data.get("new_password_again"):
            self.add_error("new_password_again", "The two new passwords differ.")
        return data


class EmailChangeForm(ServiceForm):
    email = forms.EmailField(
        label="New email address",
        required=False,
        max_length=254,
        help_text=EMAIL_HELP,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    password = _password_field("Current password", "current-password")


class ResetPasswordForm(SetPasswordForm):
    """Django's new-password form of a reset link, saved by the service, which also ends the
    account's API token (Django's own save would leave the token working)."""

    def save(self, commit: bool = True) -> User:
        user_set_password(
            user=self.user, new_password=self.cleaned_data["new_password1"], field="new_password1"
        )
        return self.user


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


class ScrimmageAcceptForm(forms.Form):
    """Accept other owners' scrimmages with ``enabled`` set; without it, stop accepting."""

    enabled = forms.BooleanField(required=False)


class PracticeForm(ServiceForm):
    """Ask for a scrimmage: opponents to tick, the variant, how many matches, a seed to fix.

    The choices are the asker's (``references``, ``opponents``, ``variants``), so the fields
    are made with each form."""

    def __init__(
        self,
        data: Any = None,
        *,
        references: list[tuple[str, str]],
        opponents: list[tuple[int, str]],
        variants: list[tuple[str, str]],
        max_matches: int,
    ) -> None:
        super().__init__(data)
        self.fields["reference_players"] = forms.MultipleChoiceField(
            label="Reference players",
            choices=references,
            required=False,
            widget=forms.CheckboxSelectMultiple,
            help_text="Played by the platform itself: random, heuristic (bids from hand "
            "strength), search (Monte Carlo, the strongest).",
        )
        self.fields["opponents"] = forms.TypedMultipleChoiceField(
            label="Bots",
            choices=opponents,
            coerce=int,
            required=False,
            widget=forms.CheckboxSelectMultiple,
            help_text="Your other active bots, and other owners' bots whose owners accept "
            "scrimmages.",
        )
        self.fields["variant"] = forms.ChoiceField(choices=variants)
        self.fields["matches"] = forms.IntegerField(
            label="Matches",
            min_value=1,
            max_value=max_matches,
            initial=1,
            help_text=f"From 1 to {max_matches}; the seats rotate each match.",
        )
        self.fields["seed"] = forms.IntegerField(
            label="Seed",
            required=False,
            min_value=0,
            help_text="Optional: fix the deals to play them again; empty deals every match afresh.",
        )
        self.fields["time_bank_ms"] = forms.IntegerField(
            label="Time bank (ms)",
            required=False,
            min_value=0,
            max_value=MAX_TIME_BANK_MS,
            initial=DEFAULT_TIME_BANK_MS,
            help_text=f"Each seat's extra time for answers over the time limit, per match: 0 to "
            f"{MAX_TIME_BANK_MS}, 0 for none; empty gives {DEFAULT_TIME_BANK_MS}.",
        )

    def clean_time_bank_ms(self) -> int:
        """The bank asked for; left empty, the default every competition has."""
        bank = self.cleaned_data["time_bank_ms"]
        return DEFAULT_TIME_BANK_MS if bank is None else int(bank)
