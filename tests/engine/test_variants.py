"""Variants: presets, validation with a specific error per option, and the JSON schema."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, get_args, get_type_hints

import pytest
from hypothesis import given, settings

from engine import OPTIONS, PRESETS, Game, InvalidVariantError, Variant, preset
from engine.variant import CHOICES, Bidding, MadeZero
from tests.support.engine import random_game
from tests.support.engine_strategies import variants

SCHEMA_KEYS = {
    "schema",
    "name",
    "min_players",
    "max_players",
    "removed_cards",
    "max_cards",
    "order",
    "deals",
    "first_dealer",
    "trump",
    "trump_cycle",
    "last_deal_no_trump",
    "bidding",
    "hook",
    "must_trump",
    "made",
    "made_zero",
    "double_when_all",
    "missed_over",
    "missed_under",
    "winner_bonus",
    "target_score",
    "max_deals",
    "announce_over_under",
}


def refused(option: str, build: Any) -> InvalidVariantError:
    with pytest.raises(InvalidVariantError) as caught:
        build()
    assert caught.value.option == option
    assert str(caught.value).startswith(f"{option}: ")
    return caught.value


def test_there_are_the_nine_presets_of_the_rules() -> None:
    assert sorted(PRESETS) == sorted(
        [
            "oh-hell",
            "blackout",
            "oh-well",
            "nomination-whist",
            "up-and-down-the-river",
            "oh-pshaw",
            "british-oh-hell",
            "ascending-blackout",
            "la-podrida",
        ]
    )
    assert all(v.name == name for name, v in PRESETS.items())


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [("oh-hell", 3, 7), ("oh-well", 3, 7), ("up-and-down-the-river", 4, 8), ("oh-pshaw", 3, 7)],
)
def test_each_preset_allows_its_player_range(name: str, low: int, high: int) -> None:
    assert (PRESETS[name].min_players, PRESETS[name].max_players) == (low, high)


def test_the_presets_set_the_options_the_rules_name() -> None:
    p = PRESETS
    assert (p["oh-hell"].first_dealer, p["oh-hell"].hook, p["oh-hell"].missed_under) == (
        "draw",
        True,
        "taken",
    )
    assert (p["blackout"].missed_over, p["blackout"].missed_under) == ("zero", "zero")
    assert (p["oh-well"].trump, p["oh-well"].target_score, p["oh-well"].hook) == (
        "dealer_last_card",
        100,
        False,
    )
    assert p["nomination-whist"].first_dealer == "first_jack"
    assert p["british-oh-hell"].made == "bonus_only"
    assert p["ascending-blackout"].last_deal_no_trump is True
    assert p["la-podrida"].must_trump is True
    assert p["oh-pshaw"].announce_over_under is True


def test_a_preset_with_overrides_is_a_new_validated_value() -> None:
    variant = preset("oh-pshaw", winner_bonus=10)
    assert variant.winner_bonus == 10
    assert PRESETS["oh-pshaw"].winner_bonus == 0


def test_a_variant_is_immutable() -> None:
    with pytest.raises(AttributeError):
        PRESETS["oh-hell"].hook = False  # type: ignore[misc]


# -- invalid variants: the specific option is named -----------------------------------------


def test_eight_players_with_ten_cards_is_too_many_cards() -> None:
    refused("max_cards", lambda: preset("up-and-down-the-river", max_cards=10))
    error = refused(
        "max_cards", lambda: preset("oh-hell", max_cards=10, min_players=8, max_players=8)
    )
    assert "10 cards each for 8 players needs 80 cards" in str(error)


def test_ten_cards_with_up_to_seven_players_is_too_many_cards() -> None:
    refused("max_cards", lambda: preset("oh-hell", max_cards=10))
    assert preset("oh-hell", max_cards=10, max_players=5).largest_hand(5) == 10


def test_the_hook_needs_open_bidding() -> None:
    refused("hook", lambda: preset("oh-hell", bidding="closed"))
    assert preset("british-oh-hell", bidding="closed").bidding == "closed"


def test_a_player_count_outside_the_range_is_refused() -> None:
    for players in (2, 8, 9, True, "4", 4.0):
        refused("players", lambda n=players: Game(preset("oh-hell"), n, seed=1))
        refused("players", lambda n=players: preset("oh-hell").check_players(n))
    refused("players", lambda: Game(preset("up-and-down-the-river"), 9, seed=1))
    refused("players", lambda: Game(preset("up-and-down-the-river"), 3, seed=1))


def test_min_players_above_max_players_is_refused() -> None:
    refused("min_players", lambda: preset("oh-hell", min_players=6, max_players=5))


@pytest.mark.parametrize("option", ["min_players", "max_players"])
@pytest.mark.parametrize("value", [2, 9])
def test_player_bounds_outside_three_to_eight_are_refused(option: str, value: int) -> None:
    refused(option, lambda: preset("oh-hell", max_cards=5, **{option: value}))


def test_an_unknown_option_is_refused() -> None:
    refused("colour", lambda: preset("oh-hell", colour="red"))
    refused("colour", lambda: Variant.from_dict({"colour": "red"}))


def test_an_unknown_preset_is_refused() -> None:
    refused("preset", lambda: preset("oh-heaven"))


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("order", "sideways"),
        ("first_dealer", "oldest"),
        ("trump", "none"),
        ("bidding", "secret"),
        ("made", "11+bid"),
        ("made_zero", "7"),
        ("missed_over", "half"),
        ("missed_under", "all"),
        ("trump_cycle", "SHDC"),
        ("removed_cards", "odd"),
        ("max_cards", "eleven"),
    ],
)
def test_an_unknown_value_is_refused(option: str, value: str) -> None:
    error = refused(option, lambda: preset("oh-hell", **{option: value}))
    assert "unknown value" in str(error)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("max_cards", True),
        ("min_players", True),
        ("deals", True),
        ("winner_bonus", False),
        ("target_score", True),
        ("max_deals", 1.5),
        ("deals", "3"),
        ("max_cards", 5.0),
        ("hook", "yes"),
        ("hook", 1),
        ("must_trump", "true"),
        ("double_when_all", 0),
        ("last_deal_no_trump", None),
        ("announce_over_under", "no"),
        ("order", 3),
        ("name", 4),
        ("name", ""),
    ],
)
def test_a_value_of_the_wrong_type_is_refused(option: str, value: Any) -> None:
    refused(option, lambda: preset("oh-hell", max_players=5).with_options(**{option: value}))


@pytest.mark.parametrize("value", [0, -100])
def test_a_target_score_must_be_positive(value: int) -> None:
    refused("target_score", lambda: preset("oh-well", target_score=value))


def test_constant_hand_sizes_need_an_end() -> None:
    refused("order", lambda: preset("oh-hell", order="constant"))
    assert preset("oh-hell", order="constant", deals=3).schedule(4) == (10, 10, 10)


def test_last_deal_no_trump_cannot_go_with_a_target_score() -> None:
    refused("last_deal_no_trump", lambda: preset("oh-well", last_deal_no_trump=True))


def test_a_dict_that_is_not_an_object_is_refused() -> None:
    refused("variant", lambda: Variant.from_dict(["oh-hell"]))


def test_a_dict_of_another_schema_version_is_refused() -> None:
    data = PRESETS["oh-hell"].to_dict()
    data["schema"] = 2
    refused("schema", lambda: Variant.from_dict(data))


def test_errors_name_the_option_for_api_clients() -> None:
    error = refused("made", lambda: Variant.from_dict({"made": "lots"}))
    assert error.reason.startswith("unknown value 'lots'")


# -- the schema ------------------------------------------------------------------------------


def test_the_schema_has_exactly_the_documented_keys() -> None:
    assert set(PRESETS["oh-hell"].to_dict()) == SCHEMA_KEYS
    assert set(OPTIONS) == SCHEMA_KEYS - {"schema", "name"}
    assert PRESETS["oh-hell"].to_dict()["schema"] == 1


def test_every_option_default_is_the_variant_default() -> None:
    default = Variant().to_dict()
    assert {key: spec["default"] for key, spec in OPTIONS.items()} == {
        key: default[key] for key in OPTIONS
    }


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_round_trips_through_a_dict_and_json(name: str) -> None:
    variant = PRESETS[name]
    assert Variant.from_dict(variant.to_dict()) == variant
    assert Variant.from_dict(json.loads(json.dumps(variant.to_dict()))) == variant


@settings(max_examples=100, deadline=None)
@given(variants())
def test_any_valid_variant_round_trips_through_json(variant: Variant) -> None:
    data = json.loads(json.dumps(variant.to_dict()))
    assert set(data) == SCHEMA_KEYS
    again = Variant.from_dict(data)
    assert again == variant
    assert again.to_dict() == variant.to_dict()


def test_a_partial_dict_takes_the_defaults_for_the_rest() -> None:
    assert Variant.from_dict({"hook": False}) == Variant(hook=False)


def test_every_variant_describes_itself_in_plain_words() -> None:
    for variant in PRESETS.values():
        lines = variant.describe()
        assert lines
        assert all(isinstance(line, str) and line for line in lines)


@pytest.mark.parametrize(("given", "kept"), [(10, "10"), (5, "5"), ("5", "5"), ("10", "10")])
def test_made_zero_may_be_given_as_the_number_it_names(given: object, kept: str) -> None:
    variant = Variant.from_dict({"made_zero": given})

    assert variant.made_zero is MadeZero(kept)
    assert Variant.from_dict(variant.to_dict()) == variant
    assert json.loads(json.dumps(variant.to_dict()))["made_zero"] == kept


def test_every_option_with_a_closed_set_of_values_is_an_enum() -> None:
    variant = preset("oh-hell", bidding="closed", hook=False)

    for option, choices in CHOICES.items():
        assert isinstance(getattr(variant, option), choices), option
        assert OPTIONS[option]["values"] == tuple(member.value for member in choices)
    assert variant.bidding is Bidding.CLOSED


def _declared_enums(hint: Any) -> tuple[type, ...]:
    """The enum classes a field's type names, with ``int`` when a number is allowed too."""
    kinds = get_args(hint) or (hint,)
    if not any(isinstance(kind, type) and issubclass(kind, Enum) for kind in kinds):
        return ()
    return tuple(kind for kind in kinds if isinstance(kind, type) and kind is not type(None))


ENUM_FIELDS = {
    name: kinds
    for name, hint in get_type_hints(Variant).items()
    if (kinds := _declared_enums(hint))
}


def assert_enum_fields_hold_members(variant: Variant) -> None:
    for name, kinds in ENUM_FIELDS.items():
        value = getattr(variant, name)
        assert isinstance(value, kinds), f"{name} holds {type(value).__name__} {value!r}"


def test_the_enum_fields_are_every_closed_option_and_max_cards() -> None:
    assert set(ENUM_FIELDS) == {*CHOICES, "max_cards"}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_enum_field_of_a_preset_holds_its_member_after_from_dict(name: str) -> None:
    # The engine compares these fields by identity (``variant.trump is Trump.TURN_UP``), which
    # a plain string equal to the value would fail.
    assert_enum_fields_hold_members(PRESETS[name])
    assert_enum_fields_hold_members(Variant.from_dict(PRESETS[name].to_dict()))
    assert_enum_fields_hold_members(
        Variant.from_dict(json.loads(json.dumps(PRESETS[name].to_dict())))
    )


@settings(max_examples=100, deadline=None)
@given(variants())
def test_every_enum_field_of_any_variant_holds_its_member_after_from_dict(
    variant: Variant,
) -> None:
    assert_enum_fields_hold_members(variant)
    data = json.loads(json.dumps(variant.to_dict()))
    assert_enum_fields_hold_members(Variant.from_dict(data))
    options = {key: value for key, value in data.items() if key != "schema"}
    assert_enum_fields_hold_members(Variant().with_options(**options))


@pytest.mark.parametrize(
    ("option", "value"),
    [(option, member.value) for option, choices in CHOICES.items() for member in choices],
)
def test_every_value_of_every_closed_option_is_described_and_played(
    option: str, value: str
) -> None:
    variant = Variant.from_dict({"hook": False, "deals": 1, option: value})
    assert variant.describe()
    game = random_game(variant, 4, 7)
    assert game.is_over
