"""Name each test file as it starts (pyproject.toml's addopts: ``-p tests.support.progress``).

With ``-q`` pytest prints only a dot per test, so a long file (the browser tests take minutes)
leaves a log silent with no word of what runs. This writes one line as each file starts, with
the time since the run began and how many tests are done, and keeps the dots below it:

    [ 4:10 1602/1630] tests/tournaments/dashboard/test_browser.py: 11 tests
"""

from __future__ import annotations

import time
from collections import Counter

import pytest


def progress_line(*, elapsed: float, done: int, total: int, path: str, tests: int) -> str:
    """The line written as a test file starts."""
    minutes, seconds = divmod(int(elapsed), 60)
    width = len(str(total))
    return (
        f"[{minutes:2d}:{seconds:02d} {done:{width}d}/{total}] {path}: "
        f"{tests} test{'s' if tests != 1 else ''}"
    )


class FileProgress:
    """Writes the line for each file from the terminal reporter, so it sits between dot rows."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started = time.monotonic()
        self.per_file: Counter[str] = Counter()
        self.current: str | None = None
        self.done = 0
        self.dots_pending = False

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.per_file = Counter(item.nodeid.split("::")[0] for item in items)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        path = nodeid.split("::")[0]
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if path == self.current or reporter is None:
            return
        self.current = path
        if self.dots_pending:
            reporter.write("\n")
        line = progress_line(
            elapsed=time.monotonic() - self.started,
            done=self.done,
            total=sum(self.per_file.values()),
            path=path,
            tests=self.per_file[path],
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
