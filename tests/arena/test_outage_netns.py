"""The worker's link really going down mid-match charges no bot.

The match runs in a subprocess inside a network namespace whose only link is a veth pair to the
bots in this process's namespace, and so does its network check, to a listener standing in for
the broker on this side; the test takes the link down for 3 s mid-match. Needs root and
``ip netns``; skipped (with the reason) otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.hostile_bots import BotTable, Broker, Received, polite_answer, reply_json

ROOT = Path(__file__).resolve().parents[2]
OUTAGE_S = 3.0


@dataclass(frozen=True)
class Link:
    """A namespace joined to this one by a veth pair, with two bot addresses on this side."""

    namespace: str
    device: str  # this side's end of the pair
    network: str
    bot_hosts: tuple[str, str]

    def set(self, state: str) -> None:
        """Take this side's end of the link ``up`` or ``down``."""
        _ip("link", "set", "dev", self.device, state)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def link() -> Iterator[Link]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("taking a link down needs root and iproute2 (ip netns); not available here")
    tag = os.getpid() % 100000
    subnet = f"10.213.{tag % 250}"
    link = Link(f"ohhell-{tag}", f"oh{tag}a", f"{subnet}.0/24", (f"{subnet}.1", f"{subnet}.2"))
    peer = f"oh{tag}b"
    try:
        _ip("netns", "add", link.namespace)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot make a network namespace here: {exc.stderr.decode().strip()}")
    try:
        _ip("link", "add", link.device, "type", "veth", "peer", "name", peer)
        _ip("link", "set", peer, "netns", link.namespace)
        for host in link.bot_hosts:
            _ip("addr", "add", f"{host}/24", "dev", link.device)
        _ip("link", "set", link.device, "up")
        in_ns = ("netns", "exec", link.namespace, "ip")
        _ip(*in_ns, "addr", "add", f"{subnet}.3/24", "dev", peer)
        _ip(*in_ns, "link", "set", peer, "up")
        yield link
    finally:
        _ip("netns", "delete", link.namespace)  # takes the veth pair with it


class Trigger:
    """The bots answer politely; the n-th decision is held until the test has cut the link."""

    def __init__(self, after_decisions: int) -> None:
        self.after_decisions = after_decisions
        self.decisions = 0
        self.reached = threading.Event()
        self.cut = threading.Event()

    async def bot(self, req: Received, writer: asyncio.StreamWriter) -> bool:
        request = json.loads(req.body)
        if request["type"] in ("bid", "play"):
            self.decisions += 1
            if self.decisions == self.after_decisions:
                self.reached.set()
                await asyncio.get_running_loop().run_in_executor(None, self.cut.wait, 60)
        return reply_json(writer, polite_answer(request))


def test_the_workers_link_going_down_mid_match_charges_no_bot(link: Link) -> None:
    trigger = Trigger(after_decisions=12)
    one, two = link.bot_hosts
    with (
        Broker(one) as broker,
        BotTable(
            [(one, trigger.bot), (two, trigger.bot), (one, trigger.bot), (two, trigger.bot)]
        ) as t,
    ):
        match = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                link.namespace,
                sys.executable,
                "-m",
                "tests.support.netns_match",
                link.network,
                f"{broker.host}:{broker.port}",
                *t.urls,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert trigger.reached.wait(60), "the match reached the decision that cuts the link"
            link.set("down")
            trigger.cut.set()
            time.sleep(OUTAGE_S)  # the outage itself
            link.set("up")
            out, err = match.communicate(timeout=120)
        finally:
            match.kill()
        hellos = sum(r["type"] == "hello" for bot in range(4) for r in t.requests(bot))
    assert match.returncode == 0, err
    result = json.loads(out)
    assert result["finished"] is True
    assert result["faults"] == [0, 0, 0, 0]
    assert result["fallbacks"] == 0
    assert result["duration_s"] >= OUTAGE_S  # the match waited for the link
    assert hellos == 0  # the bots are never asked about the arena's network
