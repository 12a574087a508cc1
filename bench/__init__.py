"""Benchmarks: `python -m bench` prints figures measured in one run, as ratios to the machine's own
PostgreSQL commit rate."""
