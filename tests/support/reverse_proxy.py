"""The shipped nginx (docker/nginx.conf) in front of a gunicorn, and clients that send slowly.

``./run test`` runs ``python -m tests.support.reverse_proxy`` before pytest: it finds Debian's
nginx, or installs it with apt when running as root, or prints one loud line saying the reverse
proxy tests will be skipped and how to enable them. ``OHHELL_NGINX=skip`` skips them on purpose.

``nginx`` runs the repository's configuration with only the upstream address and the listen
port changed, as a subprocess of the test, with its files in a directory of its own.
"""

from __future__ import annotations

import http.client
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.processes import answering

ROOT = Path(__file__).resolve().parents[2]
NGINX_CONF = ROOT / "docker" / "nginx.conf"
# The two lines of the shipped configuration that name addresses of the compose network.
UPSTREAM_LINE = "server web:8000;"
LISTEN_LINE = "listen 8000;"

ENV_VAR = "OHHELL_NGINX"
SKIP = "skip"
APT_INSTALL = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "nginx"]
HOW_TO_ENABLE = (
    f"install nginx (as root: {' '.join(a for a in APT_INSTALL if a not in ('-y', '-qq'))})"
)


def find_nginx() -> Path | None:
    """Debian's nginx (in /usr/sbin, which may not be on a user's PATH), or None."""
    if os.environ.get(ENV_VAR) == SKIP:
        return None
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    return Path(found) if found else None


def skip_reason() -> str:
    """The one line a reverse proxy test module skips with when there is no nginx."""
    if os.environ.get(ENV_VAR) == SKIP:
        return f"REVERSE PROXY TESTS SKIPPED: {ENV_VAR}={SKIP} asks so."
    return f"REVERSE PROXY TESTS SKIPPED: no nginx found; to run them, {HOW_TO_ENABLE}."


def ensure_nginx() -> Path | None:
    """Find nginx, installing Debian's with apt as root when it is missing; None if none."""
    found = find_nginx()
    if found or os.environ.get(ENV_VAR) == SKIP:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print(
            f"run: installing Debian's nginx for the reverse proxy tests ({' '.join(APT_INSTALL)}; "
            f"set {ENV_VAR}={SKIP} to skip them instead) ...",
            file=sys.stderr,
        )
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], env=env, stdout=subprocess.DEVNULL)
        subprocess.run(APT_INSTALL, env=env, stdout=subprocess.DEVNULL)
        found = find_nginx()
    if found is None:
        print(f"run: {skip_reason()}", file=sys.stderr)
    return found


def render(upstream_port: int, listen_port: int) -> str:
    """docker/nginx.conf with gunicorn and nginx on loopback ports, not the compose network's."""
    text = NGINX_CONF.read_text()
    for line in (UPSTREAM_LINE, LISTEN_LINE):
        assert text.count(line) == 1, f"{NGINX_CONF} should have one {line!r}"
    text = text.replace(UPSTREAM_LINE, f"server 127.0.0.1:{upstream_port};")
    return text.replace(LISTEN_LINE, f"listen 127.0.0.1:{listen_port};")


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def nginx(upstream_port: int) -> Iterator[int]:
    """The shipped nginx in front of gunicorn on ``upstream_port``; yields nginx's port."""
    binary = find_nginx()
    assert binary is not None, skip_reason()
    with tempfile.TemporaryDirectory(prefix="ohhell-nginx-") as prefix:
        # Its workers run as the configuration's user: they must reach their temporary files.
        os.chmod(prefix, 0o755)
        port = free_port()
        conf = Path(prefix) / "nginx.conf"
        conf.write_text(render(upstream_port, port))
        command = [str(binary), "-p", f"{prefix}/", "-c", str(conf)]
        command += ["-g", f"daemon off; pid {prefix}/nginx.pid; error_log stderr;"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)
        with answering(process, port, "nginx", within_s=30):
            yield port


@dataclass(frozen=True)
class Probe:
    """One GET: how long it took, and its status (None when it failed or timed out)."""

    seconds: float
    status: int | None


def probe(port: int, path: str, timeout: float) -> Probe:
    """GET ``path`` on a new connection, giving up after ``timeout`` seconds."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        status: int | None = response.status
    except OSError:
        status = None
    finally:
        conn.close()
    return Probe(time.monotonic() - start, status)


class SlowClients:
    """``count`` connections that each send one more header line every ``interval`` seconds.

    A request that never ends: the request line, then a header at a time, never the blank line.
    A connection the server closes is opened again at once, as a determined client would.
    """

    def __init__(self, port: int, count: int, interval: float = 2.0) -> None:
        self.port = port
        self.count = count
        self.interval = interval
        self.lines_sent = 0
        self.reopened = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._sockets: list[socket.socket] = []

    def _open(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        sock.sendall(b"GET /api/health/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        return sock

    def _closed(self, sock: socket.socket) -> bool:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        try:
            return sock.recv(4096) == b""
        except OSError:
            return True

    def __enter__(self) -> SlowClients:
        self._sockets = [self._open() for _ in range(self.count)]
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            for i, sock in enumerate(self._sockets):
                try:
                    if self._closed(sock):
                        raise ConnectionResetError
                    sock.sendall(f"X-Slow-{self.lines_sent}: 1\r\n".encode())
                    self.lines_sent += 1
                except OSError:
                    sock.close()
                    self.reopened += 1
                    try:
                        self._sockets[i] = self._open()
                    except OSError:
                        continue

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        for sock in self._sockets:
            sock.close()


if __name__ == "__main__":
    ensure_nginx()
