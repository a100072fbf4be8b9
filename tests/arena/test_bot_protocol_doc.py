"""The bot authors' page: every example message validates against its published schema."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from arena.protocol import MESSAGE_TYPES, parse_bid, parse_card
from arena.schemagen import SCHEMA_DIR
from arena.signing import REQUEST_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign_headers
from arena.transport import encode_message, hello_message

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


def _documented_verifier() -> dict[str, Any]:
    match = re.search(r"<!-- verifier -->\n```python\n(.*?)\n```", DOC.read_text(), re.S)
    assert match, "the page shows the verifier"
    namespace: dict[str, Any] = {}
    exec(compile(match.group(1), str(DOC), "exec"), namespace)
    return namespace


@pytest.mark.parametrize(
    ("timestamp", "request_id", "signature"),
    [
        ("\xb2", "0" * 32, "sha256=00"),  # passes str.isdigit(), fails int()
        ("\u0661\u0667\u0663", "0" * 32, "sha256=00"),
        ("9" * 400, "0" * 32, "sha256=00"),
        ("+1735689600", "0" * 32, "sha256=00"),
        ("1735689600", "\xb2" * 32, "sha256=00"),
        ("1735689600", "0" * 32, "sha256=\xe9"),
        (None, None, None),
    ],
)
def test_the_documented_verifier_refuses_hostile_headers_without_an_error(
    timestamp: str | None, request_id: str | None, signature: str | None
) -> None:
    signature_ok = _documented_verifier()["signature_ok"]

    assert signature_ok("secret", b"{}", timestamp, request_id, signature) is False


def test_the_documented_verifier_accepts_an_arena_request_once() -> None:
    verifier = _documented_verifier()
    body = b'{"protocol":"ohhell/1","type":"hello"}'
    headers = sign_headers("secret", body)
    seen = verifier["SeenRequests"]()
    request_id = headers[REQUEST_ID_HEADER]

    assert verifier["signature_ok"](
        "secret", body, headers[TIMESTAMP_HEADER], request_id, headers[SIGNATURE_HEADER]
    )
    assert not verifier["signature_ok"](
        "other", body, headers[TIMESTAMP_HEADER], request_id, headers[SIGNATURE_HEADER]
    )
    assert seen.first_time(request_id)
    assert not seen.first_time(request_id)


def _test_vector() -> dict[str, str]:
    match = re.search(r"<!-- signature test vector -->\n```\n(.*?)\n```", DOC.read_text(), re.S)
    assert match, "the page shows a signature test vector"
    return {
        key.strip(): value.strip()
        for key, value in (line.split(":", 1) for line in match.group(1).splitlines())
    }


def test_the_signature_test_vector_is_what_the_arena_signs() -> None:
    vector = _test_vector()
    body = vector["body"].encode()

    assert sign_headers(
        vector["secret"], body, now=int(vector["timestamp"]), request_id=vector["request id"]
    ) == {
        TIMESTAMP_HEADER: vector["timestamp"],
        REQUEST_ID_HEADER: vector["request id"],
        SIGNATURE_HEADER: vector["signature"],
    }
    assert body == encode_message(hello_message(3000))  # a real hello, byte for byte
    assert f"{len(body)} bytes exactly" in DOC.read_text()


def test_the_documented_python_verifier_accepts_the_test_vector_at_its_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vector = _test_vector()
    signature_ok = _documented_verifier()["signature_ok"]
    args = (vector["timestamp"], vector["request id"], vector["signature"])
    monkeypatch.setattr(time, "time", lambda: int(vector["timestamp"]) + 10)

    assert signature_ok(vector["secret"], vector["body"].encode(), *args)
    assert not signature_ok("another-secret", vector["body"].encode(), *args)


def _run_node(script: str) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: the page's JavaScript samples are NOT tested")
    done = subprocess.run(
        [node, "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_documented_javascript_verifier_and_vector_agree_with_the_arena() -> None:
    match = re.search(
        r"<!-- verifier: javascript -->\n```javascript\n(.*?)\n```", DOC.read_text(), re.S
    )
    assert match, "the page shows the JavaScript verifier"
    vector = _test_vector()
    body = b'{"protocol":"ohhell/1","type":"hello"}'
    fresh = sign_headers("secret", body)
    checks = {
        "vector": [
            vector["secret"],
            vector["body"],
            vector["timestamp"],
            vector["request id"],
            vector["signature"],
        ],
        "fresh": [
            "secret",
            body.decode(),
            fresh[TIMESTAMP_HEADER],
            fresh[REQUEST_ID_HEADER],
            fresh[SIGNATURE_HEADER],
        ],
        "wrong secret": [
            "other",
            body.decode(),
            fresh[TIMESTAMP_HEADER],
            fresh[REQUEST_ID_HEADER],
            fresh[SIGNATURE_HEADER],
        ],
    }
    script = (
        match.group(1)
        + f"""
const checks = {json.dumps(checks)};
const realNow = Date.now;
const out = {{}};
for (const [name, [secret, body, ts, id, sig]] of Object.entries(checks)) {{
  Date.now = name === "vector" ? () => (Number(ts) + 10) * 1000 : realNow;
  out[name] = signatureOk(secret, Buffer.from(body, "utf8"), ts, id, sig);
}}
const seen = new SeenRequests();
out.replay = [seen.firstTime(checks.fresh[3]), seen.firstTime(checks.fresh[3])];
console.log(JSON.stringify(out));
"""
    )
    assert json.loads(_run_node(script)) == {
        "vector": True,
        "fresh": True,
        "wrong secret": False,
        "replay": [True, False],
    }


def test_the_js_starter_bot_signs_the_test_vector_as_the_arena_does() -> None:
    vector = _test_vector()
    starter = Path(__file__).resolve().parents[2] / "examples" / "starter_bot.js"
    script = (
        f"const bot = require({json.dumps(str(starter))});"
        f"console.log(bot.expectedSignature({json.dumps(vector['secret'])}, "
        f"{json.dumps(vector['timestamp'])}, {json.dumps(vector['request id'])}, "
        f"Buffer.from({json.dumps(vector['body'])})));"
    )

    assert _run_node(script).strip() == vector["signature"]
