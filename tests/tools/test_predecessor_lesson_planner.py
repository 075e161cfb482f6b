"""The predecessor's own OpenAI lesson planner tool (`massgen/tool/_extraframework_agents/
openai_assistant_lesson_planner_tool.py` in its 0.1.97 wheel), unchanged: an async
generator with `@context_params("prompt")` that makes four streamed Chat Completions calls
of its own through `AsyncOpenAI`. A team on the fake provider calls it; the tool's own
calls reach the same fake (the SDK's `OPENAI_BASE_URL`). Skips without the wheel, as
`tests/config/test_corpus.py` does."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

import massgen
from massgen.testing import FakeProvider, Reply, cooperative_agent

MEMBER = "massgen/tool/_extraframework_agents/openai_assistant_lesson_planner_tool.py"
DEFAULT_WHEEL = Path(__file__).parents[2] / ".ci/cache/massgen-0.1.97-py3-none-any.whl"
TOOL = "openai_assistant_lesson_planner"
ROLES = ("curriculum standards", "lesson planning specialist", "reviewer", "formatter")


def tool_file(directory: Path) -> Path:
    wheel = Path(os.environ.get("MASSGEN_PREDECESSOR_WHEEL") or DEFAULT_WHEEL)
    if not wheel.is_file():
        pytest.skip(f"the predecessor's wheel is not here ({wheel}); see test_corpus.py")
    with zipfile.ZipFile(wheel) as archive:
        file = directory / "lesson_planner_tool.py"
        file.write_bytes(archive.read(MEMBER))
    return file


def test_the_predecessors_lesson_planner_runs_for_a_team(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    steps: list[str] = []  # the tool's own requests, each role's user message
    offered: list[dict] = []

    def policy(request: dict) -> Reply:
        messages = request["messages"]
        tools = {t["function"]["name"]: t["function"] for t in request.get("tools") or []}
        if not tools and any(role in messages[0]["content"] for role in ROLES):
            steps.append(messages[-1]["content"])
            return Reply(text=f"<step {len(steps)}>")
        results = [m["content"] for m in messages if m["role"] == "tool"]
        if "vote" in tools:
            return cooperative_agent(request)
        if "new_answer" in tools:
            offered.append(tools[TOOL]["parameters"])
            if not results:
                return Reply(tool_calls=[(TOOL, {})])
            return Reply(tool_calls=[("new_answer", {"content": f"PLAN: {results[-1]}"})])
        return Reply(text=messages[-1]["content"])

    entry = {"name": [TOOL], "path": str(tool_file(tmp_path)), "function": [TOOL]}
    with FakeProvider(policy) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        backend = {
            "type": "chatcompletion",
            "model": "m1",
            "base_url": fake.base_url,
            "api_key": "k",
        }
        team = {"agents": [{"id": "planner", "backend": {**backend, "custom_tools": [entry]}}]}
        (tmp_path / "team.json").write_text(json.dumps(team))
        result = massgen.run(
            "Create a lesson plan for photosynthesis", config="team.json", logs=False
        )
    assert result.status == "ok"
    assert offered and all(not p.get("properties") for p in offered)  # `prompt` is hidden
    assert len(steps) == 4 and "Create a lesson plan for photosynthesis" in steps[0]
    # The log yields (each role's progress and drafts) are not the model's; the opening
    # line and the formatter's streamed text are, in order.
    assert result.answer == ("PLAN: OpenAI Lesson Planner (Multi-Agent Collaboration):\n\n<step 4>")
