"""Maths without Django: pure functions over plain values, checked as strictly as the engine.

``ratings`` is the live TrueSkill update and the conservative rating; ``intervals`` is the batch
Plackett-Luce fit and the bootstrap intervals on ranks; ``collusion`` is the tests of pairs and of
bots for collusion over running sums. Nothing here imports Django or the rest
of the app (tests/tournaments/test_layering.py), so benchmarks and the app share one definition.
"""
