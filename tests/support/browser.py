"""Find or install a Chromium for the dashboard's browser tests.

``./run test`` runs ``python -m tests.support.browser`` before pytest. It prints the browser's
path on stdout when one is found or could be installed, and otherwise one loud line on stderr
saying why the browser tests will be skipped and how to enable them. The tests ask
``find_chromium`` for the browser and skip with the same reason when there is none.

The order, decided by ``install_plan`` from what the machine offers:
1. a Chromium already there (``OHHELL_CHROMIUM``, Debian's ``chromium`` on the PATH, or the one
   Playwright downloaded earlier): use it, install nothing;
2. Debian's ``chromium`` through apt, when running as root with ``apt-get``: without the
   recommended packages (a desktop's worth, udev and systemd among them), which headless
   Chromium does without; the count of packages is said before they are installed;
3. ``playwright install chromium``, which downloads Playwright's own build where downloads work;
4. nothing: skip the browser tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

# Set to a Chromium executable to use it; set to "skip" to skip the browser tests on purpose.
ENV_VAR = "OHHELL_CHROMIUM"
SKIP = "skip"
DEBIAN_NAMES = ("chromium", "chromium-browser")
# dbus-x11 is the session bus Chromium's GTK libraries ask for (through dconf); without it apt
# picks dbus-user-session, which brings systemd in. The fonts come with fontconfig (DejaVu).
APT_PACKAGES = ("chromium", "dbus-x11")
APT_UPDATE = ["apt-get", "update", "-qq"]
APT_INSTALL = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *APT_PACKAGES]
HOW_TO_ENABLE = (
    "install Chromium (as root: apt-get install --no-install-recommends "
    f"{' '.join(APT_PACKAGES)}; or .venv/bin/playwright install chromium where downloads work), "
    f"or set {ENV_VAR}=/path/to/chromium"
)


class Step(Enum):
    """One way of getting a browser, tried in the order of the plan."""

    APT = " ".join(a for a in APT_INSTALL if a not in ("-y", "-qq"))
    PLAYWRIGHT = "playwright install chromium"


@dataclass(frozen=True)
class Machine:
    """What the machine offers, as far as getting a browser goes."""

    is_root: bool
    has_apt: bool
    has_playwright: bool


def install_plan(machine: Machine) -> list[Step]:
    """The ways to try, in order, when no browser is there yet."""
    plan = []
    if machine.is_root and machine.has_apt:
        plan.append(Step.APT)
    if machine.has_playwright:
        plan.append(Step.PLAYWRIGHT)
    return plan


def skip_reason(tried: list[Step]) -> str:
    """The one line that says why the browser tests are skipped and how to enable them."""
    if tried:
        why = "no Chromium found, and " + " and ".join(s.value for s in tried) + " failed"
    else:
        why = "no Chromium found, and this machine cannot install one (not root with apt-get)"
    return f"BROWSER TESTS SKIPPED: {why}; to run them, {HOW_TO_ENABLE}."


def missing_reason() -> str:
    """The one line saying why ``find_chromium`` found no browser: a browser test module skips
    itself with it, so pytest's summary (``-rs``) names each module once."""
    chosen = os.environ.get(ENV_VAR, "")
    if chosen == SKIP:
        return f"BROWSER TESTS SKIPPED: {ENV_VAR}={SKIP} asks so."
    why = f"{ENV_VAR}={chosen} names no file" if chosen else "no Chromium found"
    return f"BROWSER TESTS SKIPPED: {why}; to run them, {HOW_TO_ENABLE}."


def count_installs(simulation: str) -> int:
    """How many packages ``apt-get install -s`` says it would install or upgrade."""
    return sum(line.startswith("Inst ") for line in simulation.splitlines())


def playwright_chromium() -> Path | None:
    """The Chromium that ``playwright install chromium`` put in place, if it did."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        return None
    try:
        with sync_playwright() as playwright:
            path = Path(playwright.chromium.executable_path)
    except Error:
        return None
    return path if path.is_file() else None


def find_chromium() -> Path | None:
    """A Chromium executable to drive, or None (also when ``OHHELL_CHROMIUM=skip``)."""
    chosen = os.environ.get(ENV_VAR, "")
    if chosen == SKIP:
        return None
    if chosen:
        return Path(chosen) if Path(chosen).is_file() else None
    for name in DEBIAN_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    return playwright_chromium()


def this_machine() -> Machine:
    """Probe the running machine."""
    try:
        import playwright  # noqa: F401

        has_playwright = True
    except ImportError:
        has_playwright = False
    return Machine(
        is_root=os.geteuid() == 0,
        has_apt=shutil.which("apt-get") is not None,
        has_playwright=has_playwright,
    )


def apt_install() -> bool:
    """Install ``APT_PACKAGES``, first saying how many packages that takes; True when done."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(APT_UPDATE, env=env, stdout=subprocess.DEVNULL).returncode != 0:
        return False
    simulation = subprocess.run(
        [*APT_INSTALL, "--simulate"], env=env, capture_output=True, text=True
    )
    if simulation.returncode != 0:
        return False
    print(
        f"run: apt-get installs or upgrades {count_installs(simulation.stdout)} packages: "
        f"{', '.join(APT_PACKAGES)} and their dependencies, without recommended ones "
        f"(set {ENV_VAR}={SKIP} to skip the browser tests instead) ...",
        file=sys.stderr,
    )
    return subprocess.run(APT_INSTALL, env=env, stdout=subprocess.DEVNULL).returncode == 0


def run_step(step: Step) -> bool:
    """Try one way of installing a browser; True when it ran to the end."""
    if step is Step.APT:
        return apt_install()
    command = [sys.executable, "-m", "playwright", "install", "chromium"]
    return subprocess.run(command, stdout=subprocess.DEVNULL).returncode == 0


def ensure_chromium() -> Path | None:
    """Find a Chromium, installing one by the plan if none is there; None if none can be had."""
    found = find_chromium()
    if found or os.environ.get(ENV_VAR):
        if found is None:
            print(f"run: {missing_reason()}", file=sys.stderr)
        return found
    tried = []
    for step in install_plan(this_machine()):
        print(f"run: no Chromium for the browser tests; trying {step.value} ...", file=sys.stderr)
        tried.append(step)
        if run_step(step):
            found = find_chromium()
            if found:
                return found
    print(f"run: {skip_reason(tried)}", file=sys.stderr)
    return None


if __name__ == "__main__":
    path = ensure_chromium()
    print(path or SKIP)
