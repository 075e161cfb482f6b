"""What the wizard writes for a set of choices, and that it is a valid config."""

from __future__ import annotations

from massgen.api import load
from massgen.setup.wizard import USE_CASES, AgentChoice, build_config

QUICK = next(u for u in USE_CASES if u.name == "quick")


def test_agents_get_unique_ids_and_their_backends():
    config = build_config(
        QUICK,
        [
            AgentChoice("openai", "gpt-5-mini"),
            AgentChoice("openai", "gpt-5.2"),
            AgentChoice("chatcompletion", "qwen3", "http://localhost:8000/v1"),
        ],
    )
    assert [a["id"] for a in config["agents"]] == ["openai", "openai_2", "server"]
    assert config["agents"][2]["backend"] == {
        "type": "chatcompletion",
        "model": "qwen3",
        "base_url": "http://localhost:8000/v1",
    }
    assert config["orchestrator"] == QUICK.orchestrator
    assert len(load(config).config.agents) == 3


def test_built_in_agents_get_varied_sampling_and_bounded_answers():
    config = build_config(QUICK, [AgentChoice("local", "SmolLM2-135M-Instruct")] * 3)
    backends = [a["backend"] for a in config["agents"]]
    assert [b["temperature"] for b in backends] == [0.2, 0.6, 0.9]
    assert [b["seed"] for b in backends] == [1, 2, 3]
    assert {b["max_tokens"] for b in backends} == {256}
    assert [a.backend.type for a in load(config).config.agents] == ["local"] * 3


def test_every_use_case_is_a_valid_orchestrator_section():
    for use_case in USE_CASES:
        config = build_config(use_case, [AgentChoice("groq", "llama-3.3-70b-versatile")])
        assert load(config).config.orchestrator.max_new_answers_per_agent >= 1
