"""The parts of bench/bench_soak.py."""
