"""Benchmarks of massgen's own overhead; `python -m bench` writes docs/benchmarks.md."""
