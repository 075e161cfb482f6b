"""A team with `enable_web_search: true` on every provider that hosts search, each on its
real SDK against its loopback fake: the searches and their sources show in the live view
and the log, the published answers and the final answer carry their sources, and a
provider without the tool is refused at load."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

import massgen
from massgen import cli
from massgen.api import load
from massgen.core import events as ev
from massgen.core.errors import ConfigError
from massgen.testing import fake_gemini, fake_xai
from massgen.testing.fake_anthropic import FakeAnthropic
from massgen.testing.fake_gemini import FakeGemini
from massgen.testing.fake_openai_responses import FakeResponses
from massgen.testing.fake_provider import FakeProvider
from massgen.testing.fake_xai import FakeXai
from massgen.testing.policy import FakeSearch, Reply, cooperative_agent
from massgen.ui.live import render_live
from massgen.ui.model import ViewModel

QUESTION = "What is the capital of France?"

# Backend type -> (model, fake server, the policy that fake's requests suit).
PROVIDERS: dict[str, tuple[str, Any, Callable[[dict], Reply]]] = {
    "openai": ("gpt-5-mini", FakeResponses, cooperative_agent),
    "claude": ("claude-sonnet-4-6", FakeAnthropic, cooperative_agent),
    "gemini": ("gemini-2.5-flash", FakeGemini, fake_gemini.cooperative_agent),
    "grok": ("grok-4", FakeXai, fake_xai.cooperative_agent),
    # OpenRouter's web plugin, over Chat Completions.
    "openrouter": ("openai/gpt-5-mini", FakeProvider, cooperative_agent),
}
# OpenRouter's plugin searches before the model runs and reports only what it cites.
QUERYLESS = {"openrouter"}


def search_of(kind: str) -> FakeSearch:
    return FakeSearch(f"{kind} capital of France", ((f"https://{kind}.example/paris", "Paris"),))


def searching(kind: str, cooperate: Callable[[dict], Reply]) -> Callable[[dict], Reply]:
    """Cooperates, searching the web before each answer and the final presentation."""

    def policy(request: dict) -> Reply:
        reply = cooperate(request)
        if any(name == "vote" for name, _ in reply.tool_calls):
            return reply
        return dataclasses.replace(reply, hosted=[search_of(kind)])

    return policy


def cited(kind: str) -> str:
    """A source as an answer lists it; OpenAI and xAI report a search's pages by URL only."""
    url = f"<https://{kind}.example/paris>"
    return url if kind in ("openai", "grok") else f"Paris {url}"


@contextmanager
def team(**backend: Any) -> Iterator[tuple[dict, dict]]:
    with ExitStack() as stack:
        fakes, agents = {}, []
        for kind, (model, fake_class, cooperate) in PROVIDERS.items():
            fake = stack.enter_context(fake_class(searching(kind, cooperate)))
            fakes[kind] = fake
            spec = {"type": kind, "model": model, "base_url": fake.base_url, "api_key": "k"}
            agents.append({"id": kind, "backend": {**spec, **backend}})
        yield {"agents": agents, "orchestrator": {"seed": 7}}, fakes


def screen(model: ViewModel, width: int = 320, height: int = 60) -> str:
    console = Console(file=StringIO(), width=width, height=height, color_system=None)
    console.print(render_live(model, width=width, height=height, elapsed=3))
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())


async def test_web_search_on_every_hosting_provider_shows_searches_and_sources(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with team(enable_web_search=True) as (config, fakes):
        events = [event async for event in massgen.stream(QUESTION, config)]
        requests = {kind: fake.requests[0] for kind, fake in fakes.items()}
    # Each provider was asked for its own search tool.
    assert {"type": "web_search"} in requests["openai"]["tools"]
    assert any(t.get("type") == "web_search_20250305" for t in requests["claude"]["tools"])
    assert {"googleSearch": {}} in requests["gemini"]["tools"]
    assert requests["gemini"]["toolConfig"] == {"includeServerSideToolInvocations": True}
    assert any("web_search" in t for t in requests["grok"]["tools"])
    assert requests["openrouter"]["plugins"] == [{"id": "web"}]

    assert isinstance(events[-1], ev.RunFinished)
    finished = events[-1].outcome
    assert finished.status == "ok", finished.reason
    used = [e for e in events if isinstance(e, ev.HostedToolUsed)]
    assert {e.agent for e in used} == set(PROVIDERS)
    assert [e.agent for e in used if e.phase == "presentation"] == [finished.winner]
    for event in used:
        query = "" if event.agent in QUERYLESS else search_of(event.agent).query
        assert event.activity.query == query
        assert [s.url for s in event.activity.sources] == [f"https://{event.agent}.example/paris"]

    # The live view has a line per search with its query, and its sources under it.
    model = ViewModel()
    for event in events:
        if isinstance(event, ev.CoordinationFinished):
            break  # the panes, as they stood while the team worked
        model.apply(event)
    shown = screen(model)
    for kind in PROVIDERS:
        query = "…" if kind in QUERYLESS else f"{kind} capital of France"
        assert f"⌕ web search (hosted): {query} · 1 source" in shown
        assert f"  [1] {cited(kind)}" in shown

    # Answers written as a new_answer argument list their sources; so does the final text.
    for answer in (e for e in events if isinstance(e, ev.AnswerPublished)):
        assert answer.content.startswith(f"[{PROVIDERS[answer.agent][0]} answer 1]")
        assert answer.content.endswith(f"Sources:\n[1] {cited(answer.agent)}\n")
    assert finished.answer.startswith(f"Final answer from {PROVIDERS[finished.winner][0]}.")
    assert f"Sources:\n[1] Paris <https://{finished.winner}.example/paris>" in finished.answer

    # The log records every search with its sources.
    logged = [
        json.loads(line)
        for path in tmp_path.glob(".massgen/massgen_logs/*/turn_1/events.jsonl")
        for line in path.read_text().splitlines()
    ]
    searches = [e for e in logged if e["type"] == "hosted_tool_used"]
    assert len(searches) == len(used)
    assert searches[0]["sources"][0]["url"].endswith(".example/paris")
    assert ev.event_from_dict(searches[0]) == used[0]


async def test_without_the_key_no_hosted_tool_is_sent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with team() as (config, fakes):
        async for _ in massgen.stream(QUESTION, config, logs=False):
            pass
        requests = {kind: fake.requests[0] for kind, fake in fakes.items()}
    assert all(t["type"] == "function" for t in requests["openai"]["tools"])
    assert "include" not in requests["openai"]
    assert all("name" in t and "input_schema" in t for t in requests["claude"]["tools"])
    assert all("functionDeclarations" in t for t in requests["gemini"]["tools"])
    assert all("function" in t for t in requests["grok"]["tools"])
    assert "plugins" not in requests["openrouter"]


# --- refused where the provider has no such tool -------------------------------------------


@pytest.mark.parametrize(
    ("backend", "key", "offers"),
    [
        ({"type": "groq", "model": "llama-3.3-70b"}, "enable_web_search", "offers no hosted tools"),
        (
            {"type": "lmstudio", "model": "qwen"},
            "enable_code_execution",
            "offers no hosted tools",
        ),
        (
            {"type": "claude"},
            "enable_x_search",
            "offers enable_web_search, enable_code_interpreter, enable_code_execution",
        ),
        (
            {"type": "azure_openai", "model": "gpt", "base_url": "https://r.openai.azure.com"},
            "enable_web_search",
            "offers enable_code_interpreter, enable_code_execution",
        ),
    ],
)
def test_a_provider_without_the_tool_is_a_config_error_naming_what_it_offers(
    tmp_path, backend, key, offers
):
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump({"agents": [{"id": "a", "backend": {**backend, key: True}}]}))
    with pytest.raises(ConfigError) as raised:
        load(str(path))
    error = raised.value
    assert error.path == f"agents[0].backend.{key}"
    assert error.file is not None and error.file.endswith("team.yaml")
    assert offers in (error.fix or "")
    assert f"remove {key}" in (error.fix or "")


def test_validate_prints_the_refusal_in_one_line(tmp_path, capsys):
    path = tmp_path / "team.yaml"
    backend = {"type": "groq", "model": "m", "enable_web_search": True}
    path.write_text(yaml.safe_dump({"agents": [{"id": "a", "backend": backend}]}))
    assert cli.main(["--validate", str(path)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "agents[0].backend.enable_web_search" in err
    assert "'groq' has no provider-hosted web search" in err
    hosts = err.split("the backend types that host web search are ", 1)[1]
    assert {"claude", "gemini", "grok", "openai", "openrouter"} <= set(
        hosts.replace(", or ", ", ").split(", ")
    )


@pytest.mark.parametrize("kind", ["openai", "claude", "gemini", "grok", "openrouter"])
def test_each_hosting_provider_accepts_its_keys(kind):
    keys = {"enable_web_search": True}
    if kind != "openrouter":
        keys["enable_code_execution"] = True
    if kind == "grok":
        keys["enable_x_search"] = True
    config = {"agents": [{"id": "a", "backend": {"type": kind, "model": "m", **keys}}]}
    loaded = load(config)
    assert loaded.config.agents[0].backend.hosted_tools()


def test_the_readme_example_validates():
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme.split("### Provider-hosted tools", 1)[1]
    snippet = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    loaded = load(yaml.safe_load(snippet))
    hosted = [agent.backend.hosted_tools() for agent in loaded.config.agents]
    assert hosted == [("web_search", "code_execution"), ("web_search", "x_search")]
