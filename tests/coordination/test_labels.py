"""Labels: anonymous, seeded, and the only way a model can name an answer."""

from __future__ import annotations

from massgen.coordination.labels import Labels

IDS = ["gpt", "claude", "gemini", "grok"]


def test_stems_are_a_seeded_shuffle_that_hides_config_order():
    stems = {seed: Labels(IDS, seed).as_dict() for seed in range(20)}
    assert stems[5] == Labels(IDS, 5).as_dict()  # same seed, same names
    assert all(
        sorted(s.values()) == ["agent1", "agent2", "agent3", "agent4"] for s in stems.values()
    )
    assert len({tuple(s.values()) for s in stems.values()}) > 1


def test_a_label_reads_back_to_its_agent_and_version():
    labels = Labels(IDS, seed=7)
    label = labels.label("claude", 3)
    assert label == f"{labels.stem('claude')}.3"
    assert labels.parse(f"  {label} ") == ("claude", 3)


def test_anything_but_a_team_label_is_not_parsed():
    labels = Labels(IDS, seed=7)
    for text in ["claude", "agent9.1", "agent1", "agent1.x", "gpt.1", ""]:
        assert labels.parse(text) is None
