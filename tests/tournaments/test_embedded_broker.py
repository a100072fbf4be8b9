"""The local broker of embedded defaults under load: several processes publish while the worker
that ./run starts consumes; it must take every message whole, once, and stay alive.

It costs about 5 minutes on 2 loaded cores, and must: the defect it guards against (the worker
reading a message still being written, then stopping for good) showed only under sustained load
and mostly as publishers started, so it sends about 9,000 tasks through the SQLite broker, one
transaction each, with the publishers started afresh in each of 8 rounds. Fewer rounds or
messages would make a test that passes on a broker that loses the race now and then."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.support.recording import expected_keys
from tests.support.workers import ROOT, embedded_env, local_worker, migrate, wait_for

pytestmark = pytest.mark.slow

# A backlog on the control queue keeps the worker polling all its queues without a pause, while
# other processes publish large messages to the two others a few at a time: the worker then
# takes each of those as soon as it appears, so it would read one still being written if the
# broker let it. kombu's filesystem transport did, and the worker stopped on a JSONDecodeError,
# mostly while the publishers were starting: so they start afresh several times over.
ROUNDS = 8
BACKLOG = 400
TRICKLES = 8
TRICKLED_EACH = 20
TRICKLE_PAUSE = 0.05
MESSAGE_SIZE = 50_000


def publisher(
    env: dict[str, str], records: Path, prefix: str, count: int, kind: str, pause: float, size: int
) -> subprocess.Popen[str]:
    """A process publishing record tasks (tests/support/recording.py)."""
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "tests.support.recording"),
            *(str(records), prefix, str(count), kind, str(pause), str(size)),
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(*processes: subprocess.Popen[str]) -> None:
    """Wait for publishers to end; fail with the errors of one that did not succeed."""
    for process in processes:
        _, errors = process.communicate(timeout=600)
        assert process.returncode == 0, errors[-3000:]


def test_the_local_worker_runs_every_task_once_while_several_processes_publish(
    tmp_path: Path,
) -> None:
    env = embedded_env(tmp_path / "db.sqlite3")
    migrate(env)
    records, log = tmp_path / "records", tmp_path / "worker.log"
    records.touch()

    def ran() -> Counter[str]:
        return Counter(records.read_text().split())

    with local_worker(env, log, "-I", "tests.support.recording") as worker:

        def done_or_dead(keys: int) -> bool:
            return worker.poll() is not None or len(ran()) >= keys

        # A first task through, so the others are published while the worker consumes.
        finish(publisher(env, records, "first", 1, "", 0, 0))
        wait_for(lambda: done_or_dead(2), 300, "the worker to run a first task")
        kinds = ("matches", "ladder")
        expected = expected_keys("first", 1)
        for number in range(ROUNDS):
            prefixes = [f"r{number}p{n}" for n in range(TRICKLES)]
            finish(
                publisher(env, records, f"r{number}backlog", BACKLOG, "", 0, 0),
                *(
                    publisher(
                        env,
                        records,
                        prefix,
                        TRICKLED_EACH,
                        kinds[n % 2],
                        TRICKLE_PAUSE,
                        MESSAGE_SIZE,
                    )
                    for n, prefix in enumerate(prefixes)
                ),
            )
            expected |= expected_keys(f"r{number}backlog", BACKLOG)
            for prefix in prefixes:
                expected |= expected_keys(prefix, TRICKLED_EACH)
        wait_for(lambda: done_or_dead(len(expected)), 900, "every task to run")

        assert worker.poll() is None, f"the local worker died:\n{log.read_text()[-3000:]}"
        counts = ran()
        assert set(counts) == expected
        assert [key for key, times in counts.items() if times != 1] == []
