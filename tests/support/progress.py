"""Name each test file as it starts (pyproject.toml's addopts: ``-p tests.support.progress``).

With ``-q`` pytest prints only a dot per test, so a long file (the browser tests take minutes)
leaves a log silent with no word of what runs. This writes one line as each file starts, with
the time since the run began and how many tests are done, and keeps the dots below it:

    [ 4:10 1602/1630] tests/tournaments/dashboard/test_browser.py: 11 tests

A file is named once. pytest-django runs the tests that need whole transactions after the others,
so some files' tests come in two runs; the line says how many of them wait for the second.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest


def progress_line(
    *, elapsed: float, done: int, total: int, path: str, tests: int, later: int = 0
) -> str:
    """The line written as a test file starts (``later`` of its tests run after other files)."""
    minutes, seconds = divmod(int(elapsed), 60)
    width = len(str(total))
    line = (
        f"[{minutes:2d}:{seconds:02d} {done:{width}d}/{total}] {path}: "
        f"{tests} test{'s' if tests != 1 else ''}"
    )
    return f"{line} ({later} of them later, after other files)" if later else line


def first_runs(paths: list[str]) -> Counter[str]:
    """How many tests of each file run in its first unbroken run, in the order given."""
    first: Counter[str] = Counter()
    ended: set[str] = set()
    previous: str | None = None
    for path in paths:
        if path != previous and previous is not None:
            ended.add(previous)
        if path not in ended:
            first[path] += 1
        previous = path
    return first


class FileProgress:
    """Writes the line for each file from the terminal reporter, so it sits between dot rows."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started = time.monotonic()
        self.per_file: Counter[str] = Counter()
        self.first_run: Counter[str] = Counter()
        self.named: set[str] = set()
        self.current: str | None = None
        self.done = 0
        self.dots_pending = False

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        paths = [item.nodeid.split("::")[0] for item in items]
        self.per_file = Counter(paths)
        self.first_run = first_runs(paths)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        path = nodeid.split("::")[0]
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if path == self.current or reporter is None:
            return
        self.current = path
        if path in self.named:  # the rest of a file named before
            return
        self.named.add(path)
        if self.dots_pending:
            reporter.write("\n")
        line = progress_line(
            elapsed=time.monotonic() - self.started,
            done=self.done,
            total=sum(self.per_file.values()),
            path=path,
            tests=self.per_file[path],
            later=self.per_file[path] - self.first_run[path],
        )
        reporter.write_line(line, bold=True)
        reporter.flush()
        self.dots_pending = False

    def pytest_runtest_logfinish(self) -> None:
        self.done += 1
        self.dots_pending = True


def pytest_configure(config: pytest.Config) -> None:
    # Only where pytest shows the dots: -v names every test already, -qq prints nothing per test.
    if config.get_verbosity() == -1:
        config.pluginmanager.register(FileProgress(config), "file-progress")
