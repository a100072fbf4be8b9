"""Request signatures: the documented material, verification, tampering and replays."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from arena.signing import (
    REQUEST_ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    ReplayGuard,
    sign_headers,
    signed_material,
    verify_signature,
)

SECRET = "bot-secret"
BODY = b'{"protocol":"ohhell/1","type":"hello"}'
NOW = 1_735_689_600
REQUEST_ID = "8f14e45fceea167a5a36dedd4bea2543"
# Header values a hostile caller may send; each passes some naive check (isdigit, int, strip).
HOSTILE_TIMESTAMPS = [
    "\xb2",
    "\u0661\u0667\u0663",
    " 1735689600",
    "1735689600\n",
    "+1735689600",
    "1_735_689_600",
    "9" * 400,
    "",
    "\x00",
]
HOSTILE_REQUEST_IDS = [
    "",
    "X" * 32,
    "8F14E45FCEEA167A5A36DEDD4BEA2543",
    REQUEST_ID + "\n",
    "\xb2" * 32,
]


def test_the_signature_is_hmac_sha256_of_timestamp_request_id_and_body() -> None:
    headers = sign_headers(SECRET, BODY, now=NOW, request_id=REQUEST_ID)

    material = b"1735689600." + REQUEST_ID.encode() + b"." + BODY
    expected = hmac.new(SECRET.encode(), material, hashlib.sha256).hexdigest()
    assert headers == {
        TIMESTAMP_HEADER: "1735689600",
        REQUEST_ID_HEADER: REQUEST_ID,
        SIGNATURE_HEADER: f"sha256={expected}",
    }
    assert signed_material(NOW, REQUEST_ID, BODY) == material


def test_every_request_gets_a_new_request_id() -> None:
    ids = {sign_headers(SECRET, BODY, now=NOW)[REQUEST_ID_HEADER] for _ in range(100)}

    assert len(ids) == 100
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_a_tampered_request_id_does_not_verify() -> None:
    headers = sign_headers(SECRET, BODY, now=NOW)
    headers[REQUEST_ID_HEADER] = REQUEST_ID

    assert not verify_signature(SECRET, BODY, headers, now=NOW)


@pytest.mark.parametrize("timestamp", HOSTILE_TIMESTAMPS)
def test_a_hostile_timestamp_is_refused_without_an_error(timestamp: str) -> None:
    headers = {**sign_headers(SECRET, BODY, now=NOW), TIMESTAMP_HEADER: timestamp}

    assert verify_signature(SECRET, BODY, headers, now=NOW) is False


@pytest.mark.parametrize("request_id", HOSTILE_REQUEST_IDS)
def test_a_hostile_request_id_is_refused_without_an_error(request_id: str) -> None:
    headers = sign_headers(SECRET, BODY, now=NOW, request_id=REQUEST_ID)
    headers[REQUEST_ID_HEADER] = request_id

    assert verify_signature(SECRET, BODY, headers, now=NOW) is False


def test_the_replay_guard_refuses_a_repeated_request_id_within_the_window() -> None:
    guard = ReplayGuard(max_skew_s=300)

    assert guard.first_time(REQUEST_ID, now=NOW)
    assert not guard.first_time(REQUEST_ID, now=NOW + 1)
    assert not guard.first_time(REQUEST_ID, now=NOW + 599)
    assert guard.first_time("0" * 32, now=NOW + 2)


def test_the_replay_guard_forgets_ids_whose_requests_are_too_old_to_verify() -> None:
    guard = ReplayGuard(max_skew_s=300)
    guard.first_time(REQUEST_ID, now=NOW)

    # By now a request signed at NOW - 300 or later fails the timestamp check anyway.
    assert guard.first_time("1" * 32, now=NOW + 601)
    assert guard.first_time(REQUEST_ID, now=NOW + 601)


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
