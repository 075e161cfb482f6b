"""The README's example of the predecessor's coordination aids loads as it says, and the
team it describes gets the tools it names."""

from __future__ import annotations

from pathlib import Path

import yaml

from massgen.config import config_from_dict
from massgen.runs import members
from massgen.runs.toolboxes import open_tools

README = Path(__file__).parents[2] / "README.md"


def snippet() -> dict:
    section = README.read_text(encoding="utf-8").split("### Skills, memory, subagents", 1)[1]
    return yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])


def test_the_readme_example_loads_with_what_it_says(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    config = config_from_dict(snippet(), "README.md", env={})
    members.check(config, source="README.md")
    coordination = config.orchestrator.coordination
    assert coordination.use_skills and coordination.enable_memory_filesystem_mode
    assert coordination.enable_subagents and coordination.subagent_max_concurrent == 3
    assert coordination.max_orchestration_restarts == 1
    a, b = config.agents
    assert a.backend.media.image_generation and b.backend.media.multimodal_tools


async def test_the_readme_team_gets_the_tools_it_names(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    config = config_from_dict(snippet(), "README.md", env={})
    async with open_tools(config, log_dir=None) as boxes:
        names = {agent: {s.name for s in box.specs()} for agent, box in boxes.items()}
    assert "generate_media" in names["a"]
    assert "read_media" in names["b"]


def test_the_readme_example_asks_for_its_aids_and_questions(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    coordination = config_from_dict(snippet(), "README.md", env={}).orchestrator.coordination
    assert coordination.persona_generator.enabled
    assert coordination.evaluation_criteria_generator.enabled
    assert coordination.question_paraphraser.enabled
    assert coordination.broadcast == "agents"
