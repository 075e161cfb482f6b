"""The serving benchmark's arithmetic (its numbers live in docs/benchmarks.md)."""

from bench.serving import percentile


def test_percentiles_are_nearest_rank():
    values = [float(v) for v in range(1, 51)]  # 50 requests
    assert percentile(values, 50) == 25.0
    assert percentile(values, 99) == 50.0
    assert percentile([3.0], 99) == 3.0
