"""HTTP clients for benchmarks: a steady reader of a server's pages, timing every answer."""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass, field


@dataclass
class WebLoad:
    """One keep-alive client reading paths in turn, with every answer's time."""

    port: int
    paths: dict[str, str]  # a name for each path read
    times: dict[str, list[float]] = field(default_factory=dict)
    errors: int = 0
    done: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        for name in self.paths:
            self.times.setdefault(name, [])

    def run(self) -> None:
        """Read the paths in turn, 50 ms apart, until ``done`` is set."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        while not self.done.is_set():
            for name, path in self.paths.items():
                started = time.perf_counter()
                try:
                    connection.request("GET", path)
                    response = connection.getresponse()
                    response.read()
                    ok = response.status == 200
                except (OSError, http.client.HTTPException):
                    ok = False
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self.times[name].append((time.perf_counter() - started) * 1000)
                self.errors += not ok
            time.sleep(0.05)
