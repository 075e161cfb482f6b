"""The surfaces benchmark's arithmetic and verdict (its numbers live in docs/benchmarks.md)."""

from bench.surfaces import PATHS, Timing, added, render


def _timings(inproc: float, mcp: float, responses: float) -> dict[str, list[Timing]]:
    def runs(ms: float) -> list[Timing]:
        return [Timing(ms / 2000, (ms + i) / 1000) for i in range(50)]

    return {PATHS[0]: runs(inproc), PATHS[1]: runs(mcp), PATHS[2]: runs(responses)}


def test_added_latency_is_against_in_process_at_the_same_percentile():
    timings = _timings(100, 130, 110)
    assert round(added(timings, PATHS[1], 50, False), 6) == 30.0
    assert round(added(timings, PATHS[2], 99, True), 6) == 5.0


def test_the_section_says_which_path_is_over_the_20_ms_budget():
    text = render(50, _timings(100, 130, 110), (1.0, 2.0))
    assert "MCP (stdio): over the budget (+30.0 ms" in text
    assert "Responses (HTTP): within the budget (+10.0 ms" in text
    assert "| in-process | 50.0 | 50.0 | 124.0 | 149.0 |  |  |" in text
