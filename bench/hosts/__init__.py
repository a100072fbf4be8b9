"""The parts of bench/bench_hosts.py: the hub and its hosts, the cast, throughput and the cut."""

QUEUE = NAME = "bench-hosts"  # the queue, and the start of every name the bench gives
STALE_SECONDS = 15  # MATCH_STALE_SECONDS on the hosts: the smallest the settings allow
TABLE = 4
BOTS = 16
SHORT_OPTIONS = {"max_cards": 3, "order": "down"}
