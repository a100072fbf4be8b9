"""How ``./run test`` gets a Chromium for the browser tests: the plan, the skip line, the search."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.browser import (
    APT_INSTALL,
    ENV_VAR,
    HOW_TO_ENABLE,
    Machine,
    Step,
    count_installs,
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
    assert (
        "apt-get install --no-install-recommends chromium dbus-x11 and playwright install "
        "chromium failed"
    ) in failed


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
        [sys.executable, "-m", "tests.support.browser"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0
    assert done.stdout.strip() == str(fake)
    assert done.stderr == ""


def test_skipping_on_purpose_prints_one_line_and_tells_pytest_to_skip() -> None:
    env = {**os.environ, ENV_VAR: "skip"}
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.browser"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == "skip"
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"run: BROWSER TESTS SKIPPED: {ENV_VAR}=skip asks so.")


def test_apt_installs_chromium_without_recommended_packages() -> None:
    # Recommends would bring a desktop's worth (udev, upower, Mesa, printing) and with udev
    # an upgrade of systemd; dbus-x11 keeps dbus-user-session, and so systemd, out.
    assert APT_INSTALL == [
        "apt-get",
        "install",
        "-y",
        "-qq",
        "--no-install-recommends",
        "chromium",
        "dbus-x11",
    ]
    assert Step.APT.value == "apt-get install --no-install-recommends chromium dbus-x11"
    assert "apt-get install --no-install-recommends chromium dbus-x11" in HOW_TO_ENABLE


def test_the_packages_apt_would_install_or_upgrade_are_counted_from_its_simulation() -> None:
    simulation = (
        "Inst libudev1 [252.38-1~deb12u1] (252.39-1~deb12u2 Debian:12.15/oldstable [amd64])\n"
        "Inst chromium-common (156.0.8078.114-1~deb12u1 Debian-Security:12/oldstable [amd64])\n"
        "Inst chromium (156.0.8078.114-1~deb12u1 Debian-Security:12/oldstable [amd64])\n"
        "Conf libudev1 (252.39-1~deb12u2 Debian:12.15/oldstable [amd64])\n"
        "Conf chromium (156.0.8078.114-1~deb12u1 Debian-Security:12/oldstable [amd64])\n"
    )
    assert count_installs(simulation) == 3
    assert count_installs("") == 0


def test_skip_on_purpose_skips_each_browser_module_with_one_line_and_installs_nothing(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env[ENV_VAR] = "skip"
    # A PATH without apt-get or chromium: were the switch ignored, nothing could be installed.
    env["PATH"] = f"{tmp_path}{os.pathsep}{Path(sys.executable).parent}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "tests/tournaments/dashboard/test_browser.py",
            "tests/tournaments/e2e/test_onboarding_e2e.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # Each module skips itself whole, so nothing is collected from them.
    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, done.stdout + done.stderr
    skipped = [line for line in done.stdout.splitlines() if "BROWSER TESTS SKIPPED" in line]
    assert [line.split(":")[0] for line in skipped] == [
        "SKIPPED [1] tests/tournaments/dashboard/test_browser.py",
        "SKIPPED [1] tests/tournaments/e2e/test_onboarding_e2e.py",
    ]
    assert all(line.endswith(f"BROWSER TESTS SKIPPED: {ENV_VAR}=skip asks so.") for line in skipped)
    assert "2 skipped" in done.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="apt is tried only as root")
def test_as_root_apt_is_called_without_recommends_after_saying_how_many_packages(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls"
    apt = tmp_path / "apt-get"
    # A stand-in apt-get: logs its arguments, simulates three packages, "installs" a Chromium.
    apt.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {calls}\n'
        'case "$*" in *--simulate*) printf "Inst a (1)\\nInst b (1)\\nInst c (1)\\nConf a\\n";;\n'
        f'  install*) printf "#!/bin/sh\\n" > {tmp_path}/chromium\n'
        f"    /bin/chmod +x {tmp_path}/chromium;;\n"
        "esac\n"
    )
    apt.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env["PATH"] = f"{tmp_path}{os.pathsep}{Path(sys.executable).parent}"
    env["PLAYWRIGHT_BROWSERS_PATH"] = str(tmp_path / "no-playwright-browsers")
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.browser"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == str(tmp_path / "chromium"), done.stderr
    assert calls.read_text().splitlines() == [
        "update -qq",
        "install -y -qq --no-install-recommends chromium dbus-x11 --simulate",
        "install -y -qq --no-install-recommends chromium dbus-x11",
    ]
    said = done.stderr.splitlines()
    assert said[0].endswith("trying apt-get install --no-install-recommends chromium dbus-x11 ...")
    assert said[1].startswith("run: apt-get installs or upgrades 3 packages: chromium, dbus-x11")
    assert f"set {ENV_VAR}=skip to skip the browser tests instead" in said[1]
