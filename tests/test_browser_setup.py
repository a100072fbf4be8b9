"""How ``./run test`` gets a Chromium for the browser tests: the plan, the skip line, the search."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import (
    ENV_VAR,
    HOW_TO_ENABLE,
    Machine,
    Step,
    find_chromium,
    install_plan,
    skip_reason,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("machine", "plan"),
    [
        (Machine(is_root=True, has_apt=True, has_playwright=True), [Step.APT, Step.PLAYWRIGHT]),
        (Machine(is_root=True, has_apt=True, has_playwright=False), [Step.APT]),
        (Machine(is_root=False, has_apt=True, has_playwright=True), [Step.PLAYWRIGHT]),
        (Machine(is_root=True, has_apt=False, has_playwright=True), [Step.PLAYWRIGHT]),
        (Machine(is_root=False, has_apt=True, has_playwright=False), []),
        (Machine(is_root=False, has_apt=False, has_playwright=False), []),
    ],
)
def test_apt_comes_first_when_root_has_it_then_playwright(machine: Machine, plan: list) -> None:
    assert install_plan(machine) == plan


def test_the_skip_line_says_why_and_how_to_enable_on_one_line() -> None:
    nothing = skip_reason([])
    failed = skip_reason([Step.APT, Step.PLAYWRIGHT])
    for line in (nothing, failed):
        assert "\n" not in line
        assert line.startswith("BROWSER TESTS SKIPPED")
        assert HOW_TO_ENABLE in line
    assert "cannot install" in nothing
    assert "apt-get install chromium and playwright install chromium failed" in failed


def test_a_named_browser_is_used_and_a_missing_one_or_skip_gives_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    monkeypatch.setenv(ENV_VAR, str(fake))
    assert find_chromium() == fake
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "absent"))
    assert find_chromium() is None
    monkeypatch.setenv(ENV_VAR, "skip")
    assert find_chromium() is None


def test_chromium_on_the_path_is_found_before_anything_is_installed(tmp_path: Path) -> None:
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env["PATH"] = f"{tmp_path}{os.pathsep}{env['PATH']}"
    done = subprocess.run(
        [sys.executable, "-m", "tests.browser"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0
    assert done.stdout.strip() == str(fake)
    assert done.stderr == ""


def test_skipping_on_purpose_prints_one_line_and_tells_pytest_to_skip() -> None:
    env = {**os.environ, ENV_VAR: "skip"}
    done = subprocess.run(
        [sys.executable, "-m", "tests.browser"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.stdout.strip() == "skip"
    assert len(done.stderr.splitlines()) == 1 and "BROWSER TESTS SKIPPED" in done.stderr
