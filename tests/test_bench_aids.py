"""The coordination-aids benchmark (`bench/aids.py`) measures what it says: one pass of each
workload on the fake provider, checked for what it counted, not for its timings
(docs/benchmarks.md holds the numbers)."""

from __future__ import annotations

import pytest

from bench import aids, run
from bench.local import kept_section, write


@pytest.fixture(scope="module")
def cost() -> aids.AidsCost:
    return aids.measure(1)


def test_skills_are_all_found_and_their_prompt_grows_with_them(cost):
    few, many = (cost.skills[n] for n in aids.SKILL_COUNTS)
    assert (few.listed, many.listed) == aids.SKILL_COUNTS
    assert many.prompt_chars > 4 * few.prompt_chars
    assert min(few.discover + many.discover) > 0


def test_the_memory_section_stays_within_its_bounds_however_many_memories(cost):
    few, past = cost.memory["a few each"], cost.memory["past the bounds"]
    # Three agents' memories of 600 characters each, all shown: the section holds them.
    assert few.note_chars > 3 * few.short_term * few.chars_each
    # 300 memories of 4,000 characters in view; the section holds about max_chars of them.
    assert past.bound_chars < past.note_chars <= past.bound_chars + aids.memory_note_overhead()
    assert len(past.seconds) == len(aids.IDS)  # one call per agent and run


def test_aids_switched_off_cost_no_calls_and_each_generation_is_one_call(cost):
    teams = cost.teams
    none, off = teams["none"][0], teams[aids.OFF][0]
    assert (off.calls, off.agent_chars, off.generation_calls) == (none.calls, none.agent_chars, 0)
    assert none.calls == 2 * len(aids.IDS) + 1  # an answer and a vote each, a presentation
    for name, generations in (("personas", 1), ("criteria", 1), ("personas + criteria", 2)):
        sample = teams[name][0]
        assert sample.generation_calls == generations
        assert sample.calls == none.calls + generations
        assert sample.agent_chars > none.agent_chars  # the persona or the criteria shown
        assert sample.generation_chars > 0


def test_a_spawn_holds_its_child_run_and_a_question_gets_both_peers_answers(cost):
    (spawn,) = cost.subagents
    assert spawn.child_calls >= 1
    assert 0 < spawn.child < spawn.call and spawn.alone > 0
    (ask,) = cost.broadcast
    assert ask.answers == len(aids.IDS) - 1
    assert ask.call > 0 and ask.model_call > 0


def test_the_section_renders_passes_its_targets_and_is_kept_by_a_full_run(cost, tmp_path):
    text = aids.render(cost, 1, (0.0, 0.0), "0.043 s")
    assert text.startswith("## 16. Coordination aids")
    same_calls, _wall, memory_bound = aids.targets(cost)  # wall time is the doc's, not ours
    assert same_calls[2] and memory_bound[2]
    assert "§2's 3-agent run through the CLI takes 0.043 s" in text
    assert "| 64 |" in text and "| past the bounds |" in text
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n")
    write(doc, text, aids.BEGIN, aids.END)
    assert kept_section(doc, aids.BEGIN, aids.END) == f"{aids.BEGIN}\n{text}\n{aids.END}"
    # A full run (`python -m bench`) rewrites its own part only: this section, and a
    # note written by hand between sections, stay as they were, twice over.
    with doc.open("a") as file:
        file.write("\nA note by hand.\n")
    for core in ("# Benchmarks\n§1-9, first run", "# Benchmarks\n§1-9, second run"):
        write(doc, core, run.BEGIN, run.END, first_at_top=True)
    kept = doc.read_text()
    assert kept.startswith(f"{run.BEGIN}\n# Benchmarks\n§1-9, second run\n{run.END}")
    assert "first run" not in kept and kept.count("# Benchmarks") == 2  # ours, and the old one
    assert f"{aids.BEGIN}\n{text}\n{aids.END}" in kept and "A note by hand." in kept
