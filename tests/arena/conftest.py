"""Fixtures for the arena tests: real bot servers on loopback."""

from tests.support.hostile_bots import hostile_bots

__all__ = ["hostile_bots"]
