"""The bot authors' page: every example message validates against its published schema."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from arena.protocol import MESSAGE_TYPES, parse_bid, parse_card
from arena.schemagen import SCHEMA_DIR

DOC = Path(__file__).resolve().parents[2] / "docs" / "bot-protocol.md"
EXAMPLE = re.compile(r"<!-- example: ([a-z]+\.(?:request|response)) -->\n```json\n(.*?)\n```", re.S)
NAMES = [f"{kind}.{part}" for kind in MESSAGE_TYPES for part in ("request", "response")]


def _examples() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, text in EXAMPLE.findall(DOC.read_text()):
        assert name not in found, f"two examples of {name}"
        found[name] = json.loads(text)
    return found


def test_the_page_shows_an_example_of_every_message() -> None:
    assert sorted(_examples()) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_example_validates_against_its_schema(name: str) -> None:
    schema = json.loads((SCHEMA_DIR / f"{name}.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(_examples()[name])


def test_the_example_answers_are_legal_for_the_example_requests() -> None:
    examples = _examples()
    bid, play = examples["bid.request"], examples["play.request"]
    assert parse_bid(examples["bid.response"], bid["legal"]) in bid["legal"]
    assert parse_card(examples["play.response"], play["legal"]) in play["hand"]


def test_every_schema_the_page_links_exists() -> None:
    for target in re.findall(r"\(\.\./(arena/[^)#]+)", DOC.read_text()):
        assert (DOC.parent.parent / target).exists(), target
