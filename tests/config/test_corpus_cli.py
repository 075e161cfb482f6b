"""The predecessor's example configs with a coding-agent CLI member (`type: claude_code`,
`type: codex`; the corpus and its fixture are `test_corpus.py`'s): how many there are,
that each one the loader accepts runs the real CLI (`ClaudeCodeBackend`, `CodexBackend`:
Claude Code through claude-agent-sdk, Codex's app server, not an API mapping), and that
one of each runs its CLI against the loopback fake of its vendor's API. Where a CLI is
not installed, its configs are refused with the install command instead (CI installs
both, `.ci/run`)."""

from __future__ import annotations

import importlib.util
import os
import pwd
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_corpus import Outcome, Placeholders, corpus  # noqa: F401  (the fixture)

import massgen
from massgen.backends import codex_tools, registry
from massgen.config.schema import MassgenConfig
from massgen.testing import coding_agent
from massgen.testing.fake_anthropic import FakeAnthropic
from massgen.testing.fake_openai_responses import FakeResponses

# Configs of massgen==0.1.97 with an agent of each type (one has both), and how many of
# them load: the rest are refused for a key of theirs that has nothing to do with the CLI
# (`round_evaluator_before_checklist`, `auto_trace_analysis`, a custom tool with no file).
USING = {"claude_code": 38, "codex": 10}
LOADED = {"claude_code": 36, "codex": 8}
INSTALLED = {
    "claude_code": importlib.util.find_spec("claude_agent_sdk") is not None,
    "codex": codex_tools.find_cli(None, os.environ) is not None,
}
INSTALL = {"claude_code": "massgen[claude-code]", "codex": codex_tools.INSTALL}
# One of each, run for real: the smallest that loads.
RUN = {
    "claude_code": "massgen/configs/tools/filesystem/claude_code_single.yaml",
    "codex": "massgen/configs/providers/openai/codex/codex_local.yaml",
}


def cli_types(root: Any, outcome: Outcome) -> set[str]:
    """The CLI types the config's agents use, read from its YAML as written."""
    raw = yaml.safe_load((root / outcome.name).read_text(encoding="utf-8"))
    agents = raw.get("agents") or [raw.get("agent")] if isinstance(raw, dict) else []
    types = {((a or {}).get("backend") or {}).get("type") for a in agents if isinstance(a, dict)}
    return types & set(USING)


def test_the_configs_with_a_coding_agent_cli_load_the_real_cli(corpus):  # noqa: F811
    from massgen.backends.claude_code import ClaudeCodeBackend
    from massgen.backends.codex import CodexBackend

    real = {"claude_code": ClaudeCodeBackend, "codex": CodexBackend}
    root, outcomes = corpus
    using = {o.name: cli_types(root, o) for o in outcomes}
    counts = {kind: sum(kind in kinds for kinds in using.values()) for kind in USING}
    print(f"\nconfigs with a coding-agent CLI member: {counts}")
    assert counts == USING
    loaded = dict.fromkeys(USING, 0)
    for outcome in outcomes:
        kinds = using[outcome.name]
        if not kinds:
            continue
        if outcome.config is None:
            # Refused: for a key of its own, or (its CLI missing) naming the install.
            missing = [k for k in kinds if not INSTALLED[k]]
            assert outcome.message and (not outcome.refused.endswith("backend.type") or missing)
            if outcome.refused.endswith("backend.type"):
                assert any(INSTALL[k] in outcome.message for k in missing), outcome.message
            continue
        for agent in outcome.config.agents:
            backend = registry.create(agent.backend, env=Placeholders())
            if agent.backend.type in real:
                assert isinstance(backend, real[agent.backend.type]), outcome.name
        for kind in kinds:
            loaded[kind] += 1
    expected = {k: LOADED[k] if INSTALLED[k] else 0 for k in USING}
    print(f"of them loaded with the real CLI: {loaded}")
    assert loaded == expected


def on_fake(config: MassgenConfig, base_url: str) -> MassgenConfig:
    """`config` with its CLI member pointed at the fake, and bounded for a test."""
    agents = [
        a.model_copy(
            update={
                "backend": a.backend.model_copy(update={"base_url": base_url, "api_key": "sk-fake"})
            }
        )
        for a in config.agents
    ]
    orchestrator = config.orchestrator.model_copy(update={"max_new_answers_per_agent": 1})
    timeouts = config.timeout_settings.model_copy(update={"orchestrator_timeout_seconds": 300})
    return config.model_copy(
        update={"agents": agents, "orchestrator": orchestrator, "timeout_settings": timeouts}
    )


@pytest.mark.timeout(900)
@pytest.mark.parametrize("kind", sorted(RUN))
def test_a_corpus_config_runs_its_real_cli_against_the_fake(corpus, kind, monkeypatch):  # noqa: F811
    if not INSTALLED[kind]:
        pytest.skip(f"{kind} is not installed ({INSTALL[kind]})")
    # This folder's HOME is a temp dir; Codex will not set up its sandbox helper under /tmp,
    # so its private home goes in the user's own cache, as outside the tests.
    monkeypatch.setenv("XDG_CACHE_HOME", str(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache"))
    _, outcomes = corpus
    chosen = next(o for o in outcomes if o.name == RUN[kind])
    assert chosen.config is not None and [a.backend.type for a in chosen.config.agents] == [kind]
    if kind == "claude_code":
        fake: Any = FakeAnthropic(coding_agent(prefix="mcp__massgen__"))
    else:
        fake = FakeResponses(coding_agent())
    with fake:
        result = massgen.run("Say hello.", config=on_fake(chosen.config, fake.base_url), logs=False)
        asked = len(fake.requests)
    assert result.status == "ok", result
    assert "answer" in result.answer and asked >= 1  # the fake's answer, through the CLI
