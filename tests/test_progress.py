"""The line pytest writes as each test file starts (tests/support/progress.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.progress import progress_line

ROOT = Path(__file__).resolve().parents[1]


def test_the_line_names_the_file_its_tests_the_time_and_how_many_are_done() -> None:
    line = progress_line(elapsed=250.7, done=1602, total=1630, path="tests/x/test_b.py", tests=11)
    assert line == "[ 4:10 1602/1630] tests/x/test_b.py: 11 tests"
    assert progress_line(elapsed=3, done=7, total=1630, path="t.py", tests=1) == (
        "[ 0:03    7/1630] t.py: 1 test"
    )


def test_each_file_gets_its_line_before_its_dots_in_quiet_mode(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_a.py").write_text("def test_1(): pass\ndef test_2(): pass\n")
    (tmp_path / "test_b.py").write_text("import pytest\n@pytest.mark.skip\ndef test_3(): pass\n")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "tests.support.progress",
        "-p",
        "no:django",
    ]
    done = subprocess.run(
        [*command, "-p", "no:cacheprovider", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.rstrip() for line in done.stdout.splitlines()][:4]
    assert re.fullmatch(r"\[ 0:0\d 0/3\] test_a\.py: 2 tests", lines[0]), lines
    assert lines[1] == ".."
    assert re.fullmatch(r"\[ 0:0\d 2/3\] test_b\.py: 1 test", lines[2]), lines
    assert re.fullmatch(r"s +\[100%\]", lines[3]), lines


def test_a_file_whose_tests_come_in_two_runs_is_named_once(tmp_path: Path) -> None:
    # As pytest-django does with tests that need whole transactions: one test of a file moved last.
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(
        "def pytest_collection_modifyitems(items):\n    items.append(items.pop(0))\n"
    )
    (tmp_path / "test_a.py").write_text("def test_1(): pass\ndef test_2(): pass\n")
    (tmp_path / "test_b.py").write_text("def test_3(): pass\n")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "tests.support.progress", "-p"]
    command += ["no:django", "-p", "no:cacheprovider", "-c", str(tmp_path / "pytest.ini")]
    done = subprocess.run(
        [*command, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    named = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert len(named) == 2, done.stdout
    assert named[0].endswith("test_a.py: 2 tests (1 of them later, after other files)"), named
    assert named[1].endswith("test_b.py: 1 test"), named


def test_verbose_runs_name_every_test_and_get_no_file_lines(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_a.py").write_text("def test_1(): pass\n")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-v",
        "-p",
        "tests.support.progress",
        "-p",
        "no:django",
    ]
    done = subprocess.run(
        [*command, "-p", "no:cacheprovider", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_a.py::test_1 PASSED" in done.stdout
    assert not re.search(r"^\[ *\d+:\d\d ", done.stdout, re.MULTILINE), done.stdout
