"""Request signatures: the documented material, verification, tampering and replays."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from arena.signing import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    Signer,
    sign_headers,
    signed_material,
    verify_signature,
)

SECRET = "bot-secret"
BODY = b'{"protocol":"ohhell/1","type":"hello"}'
NOW = 1_735_689_600


def test_the_signature_is_hmac_sha256_of_timestamp_dot_body_keyed_with_the_secret() -> None:
    headers = sign_headers(SECRET, BODY, now=NOW)

    expected = hmac.new(SECRET.encode(), b"1735689600." + BODY, hashlib.sha256).hexdigest()
    assert headers == {TIMESTAMP_HEADER: "1735689600", SIGNATURE_HEADER: f"sha256={expected}"}
    assert signed_material(NOW, BODY) == b"1735689600." + BODY


def test_a_freshly_signed_request_verifies() -> None:
    headers = sign_headers(SECRET, BODY, now=NOW)

    assert verify_signature(SECRET, BODY, headers, now=NOW + 1)


def test_header_names_are_matched_without_regard_to_case() -> None:
    headers = {k.lower(): v for k, v in sign_headers(SECRET, BODY, now=NOW).items()}

    assert verify_signature(SECRET, BODY, headers, now=NOW)


def test_a_tampered_body_does_not_verify() -> None:
    headers = sign_headers(SECRET, BODY, now=NOW)

    assert not verify_signature(SECRET, BODY.replace(b"hello", b"bid"), headers, now=NOW)


def test_a_tampered_timestamp_does_not_verify() -> None:
    headers = sign_headers(SECRET, BODY, now=NOW)
    headers[TIMESTAMP_HEADER] = str(NOW + 1)

    assert not verify_signature(SECRET, BODY, headers, now=NOW)


def test_another_secret_does_not_verify() -> None:
    headers = sign_headers("someone-else", BODY, now=NOW)

    assert not verify_signature(SECRET, BODY, headers, now=NOW)


def test_an_old_request_is_refused_as_a_replay() -> None:
    headers = sign_headers(SECRET, BODY, now=NOW - 301)

    assert not verify_signature(SECRET, BODY, headers, now=NOW)
    assert verify_signature(SECRET, BODY, headers, now=NOW, max_skew_s=600)


def test_a_request_from_the_far_future_is_refused() -> None:
    headers = sign_headers(SECRET, BODY, now=NOW + 301)

    assert not verify_signature(SECRET, BODY, headers, now=NOW)


def test_missing_or_malformed_headers_do_not_verify() -> None:
    signed = sign_headers(SECRET, BODY, now=NOW)

    assert not verify_signature(SECRET, BODY, {}, now=NOW)
    assert not verify_signature(SECRET, BODY, {TIMESTAMP_HEADER: str(NOW)}, now=NOW)
    assert not verify_signature(SECRET, BODY, {**signed, TIMESTAMP_HEADER: "-1735689600"}, now=NOW)
    assert not verify_signature(SECRET, BODY, {**signed, TIMESTAMP_HEADER: "1e9"}, now=NOW)
    assert not verify_signature(SECRET, BODY, {**signed, SIGNATURE_HEADER: "sha256=ab"}, now=NOW)
    assert not verify_signature(SECRET, BODY, {**signed, SIGNATURE_HEADER: "sha256=é"}, now=NOW)


def test_a_reused_signer_signs_exactly_like_a_fresh_signature() -> None:
    signer = Signer(SECRET)
    headers = sign_headers(SECRET, BODY, now=NOW)

    assert signer.signature(str(NOW), BODY) == headers[SIGNATURE_HEADER]
    assert signer.signature(str(NOW), BODY) == headers[SIGNATURE_HEADER]


@pytest.mark.parametrize("secret", ["", "s", "x" * 64, "y" * 65, "é" * 100, b"\x00\xff" * 40])
def test_a_signer_gives_the_standard_hmac_for_any_key_length(secret: str | bytes) -> None:
    key = secret.encode() if isinstance(secret, str) else secret
    expected = hmac.new(key, b"1735689600." + BODY, hashlib.sha256).hexdigest()

    assert Signer(secret).signature("1735689600", BODY) == "sha256=" + expected
