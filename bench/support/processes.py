"""Child processes of a benchmark: ports, waiting, CPU accounting, private servers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository, where manage.py and config/ are


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``condition`` every half second; raise naming ``what`` past ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.5)


def cpu_seconds(stat_line: str, ticks_per_second: int) -> float:
    """User plus system CPU time from a /proc/<pid>/stat line (its own threads included)."""
    fields = stat_line[stat_line.rindex(")") + 2 :].split()
    # After the command name: state is field 3 of stat(5), utime and stime are 14 and 15.
    return (int(fields[11]) + int(fields[12])) / ticks_per_second


def process_cpu(pid: int) -> float:
    """CPU seconds a process has used so far; 0 once it is gone."""
    try:
        line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    return cpu_seconds(line, os.sysconf("SC_CLK_TCK"))


def quiet_child() -> None:
    """Make this process a service: stopped by SIGTERM, deaf to the terminal's Ctrl-C."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def redis_server(host: str, port: int, *options: str) -> subprocess.Popen[bytes]:
    """Start a private redis-server without persistence on ``host:port``, in its own session."""
    command = ["redis-server", "--bind", host, "--port", str(port), "--save", ""]
    command += ["--appendonly", "no", *options]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
