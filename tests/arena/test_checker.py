"""The checker fails a bot that accepts requests it must refuse, and names the secret when a
bot refuses a correctly signed one."""

from __future__ import annotations

import asyncio

import pytest

from arena.checker import CheckReport, check_bot
from arena.cli import main
from arena.netpolicy import NetworkPolicy
from arena.probes import ProbeKind
from tests.support.signing_bots import Checks, signing_bot

SECRET = "checker-secret"
LOOPBACK = NetworkPolicy(allow_loopback=True)


def check(url: str, secret: str = SECRET) -> CheckReport:
    return asyncio.run(check_bot(url, secret, samples=7, seed=1, policy=LOOPBACK))


def accepted(report: CheckReport) -> set[ProbeKind]:
    return {probe.kind for probe in report.probes if probe.accepted}


def test_a_bot_that_checks_every_part_of_the_signing_passes() -> None:
    with signing_bot(SECRET) as url:
        report = check(url)

    assert report.passed, report.reasons()
    assert {probe.kind for probe in report.probes} == set(ProbeKind)
    assert accepted(report) == set()


@pytest.mark.parametrize(
    ("checks", "kinds"),
    [
        (Checks(signature=False), {ProbeKind.UNSIGNED, ProbeKind.FORGED, ProbeKind.STALE}),
        (Checks(replay=False), {ProbeKind.REPLAYED}),
        (Checks(clock=False), {ProbeKind.STALE}),
    ],
    ids=["no-signature-check", "replay-accepted", "stale-accepted"],
)
def test_a_bot_that_skips_a_check_fails_with_the_probe_it_accepted_named(
    checks: Checks, kinds: set[ProbeKind]
) -> None:
    with signing_bot(SECRET, checks) as url:
        report = check(url)

    assert not report.passed
    assert accepted(report) == kinds
    reasons = " ".join(report.reasons())
    assert all(f"signing probe {kind}" in reasons for kind in kinds), reasons
    # Everything else about the bot is fine: it answered hello and every sample.
    assert report.hello_ok and not report.faults and len(report.latencies_ms) == report.samples


def test_a_bot_checking_with_another_secret_fails_with_the_secret_named() -> None:
    with signing_bot("the-old-secret") as url:
        report = check(url)

    assert not report.passed and not report.hello_ok
    assert "refused" in report.faults[0] and "the secret is the likely cause" in report.faults[0]
    assert report.probes == ()


def test_the_command_line_prints_the_probes_and_exits_1_on_fail(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with signing_bot(SECRET, Checks(replay=False)) as url:
        code = main(["check", url, "--secret", SECRET, "--samples", "3"])

    out = capsys.readouterr().out
    assert code == 1
    assert "signing:  3/4 probes refused" in out
    assert "replayed: it accepted the same request id twice" in out
    assert "verdict:  FAIL" in out
