"""A running tool call's progress on the web page, in a real browser: the predecessor-style
generator tool's `is_log` yield shows under the running call, and its result replaces it."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from serve_fixture import TOKEN, Server, running_server

from massgen.testing.fake_provider import FakeProvider, Reply, cooperative_agent

STEP = "step 1 of 2: reading the sources"
TOOL = '''
import time

from massgen.tool import ExecutionResult, TextContent
from massgen.tools.python import effects


@effects(())  # touches nothing: the engine lets it run without asking
def slow_steps(topic: str):
    """Work through a topic in two steps."""
    yield ExecutionResult(output_blocks=[TextContent(data="{step}")], is_log=True)
    time.sleep(2.5)
    yield ExecutionResult(output_blocks=[TextContent(data=f"done with {{topic}}")])
'''


def stepping_agent(request: dict[str, Any]) -> Reply:
    offered = {(t.get("function") or {}).get("name") for t in request.get("tools") or []}
    results = [m["content"] for m in request.get("messages") or [] if m.get("role") == "tool"]
    if "new_answer" in offered and "vote" not in offered:
        if not results:
            return Reply(tool_calls=[("slow_steps", {"topic": "tides"})])
        return Reply(tool_calls=[("new_answer", {"content": str(results[-1])})])
    return cooperative_agent(request)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("progress")
    (folder / "home").mkdir()
    teams = folder / "teams"
    teams.mkdir()
    (teams / "steps.py").write_text(textwrap.dedent(TOOL.format(step=STEP)))
    with FakeProvider(stepping_agent) as fake:
        tool = {"name": "slow_steps", "path": "steps.py", "function": "slow_steps"}
        backend = {"type": "chatcompletion", "base_url": fake.base_url, "model": "m0"}
        config = {"agents": [{"id": "stepper", "backend": {**backend, "custom_tools": [tool]}}]}
        (teams / "steps.yaml").write_text(yaml.safe_dump(config))
        argv = ("--config", "teams/steps.yaml", "--teams-dir", "teams")
        with running_server(folder, *argv) as server:
            yield server


def test_a_running_calls_progress_shows_until_its_result_replaces_it(served, page):
    from playwright.sync_api import expect

    page.goto(f"{served.url}/?token={TOKEN}")
    expect(page.locator("#team option[value=steps]")).to_have_count(1)
    page.select_option("#team", "steps")
    page.fill("#question", "Summarise the tides.")
    page.click("#ask-button")
    call = page.locator('.agent[data-agent="stepper"] .tool.running')
    expect(call.locator(".progress")).to_have_text(STEP)
    expect(page.locator("#run")).to_have_attribute("data-status", "ok", timeout=30_000)
    expect(page.locator('.agent[data-agent="stepper"] .progress')).to_have_count(0)
    expect(page.locator('.agent[data-agent="stepper"] .tool.ok')).to_have_count(1)
    expect(page.locator("#final")).to_contain_text("done with tides")
