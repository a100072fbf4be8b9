"""Benchmarks of the platform; each ``bench_*.py`` runs from the repository root as
``python -m bench.bench_<name>`` (bench/README.md), with what they share in ``bench.support``."""
